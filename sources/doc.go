// Package sources brings a GitOps repository to the rest of the pipeline as a
// Tree: a read-only kustomize filesystem (filesys.FileSystem) confined to the
// repository root, and the revision it holds. A Tree comes from a working
// tree on disk as it is, uncommitted changes included (OpenWorkTree); from a
// committed revision of a local repository read straight from its object
// store into memory, with no checkout and no git binary (OpenRevision); or
// from a remote repository fetched with go-git into a cache of bare
// repositories, shallow and incremental where the ref allows, then read the
// same way (Fetch). A revision once fetched stays readable from the cache
// without the server (OpenCached), so a reconciler keeps its last good
// revision while the server is down. Revisions read as Flux writes them ("main@sha1:<hex>",
// "v1.2.0@sha1:<hex>", "sha1:<hex>"; a dirty working tree adds "+dirty").
// Whatever the kind of tree, no path leaves the root — not by "..", not by an
// absolute path, not by a symlink or a chain of them, to a file or a
// directory — and no file over the size bound (16 MiB unless Limits says
// otherwise) is read; both fail with typed errors naming the path, as do an
// unreachable server, refused credentials, an unknown ref and a directory
// that is not a repository. Credentials never reach a message, a log or the
// cache: URLs are redacted, secrets scrubbed from errors.
//
// The CLI gathers credentials with CredentialsFromEnv; the reconciler builds
// them from a Secret with CredentialsFromSecret (Flux's keys). The
// environment variables, in the order they are tried:
//
//	https, http:
//	  OLMSYNC_GIT_USERNAME + OLMSYNC_GIT_PASSWORD   basic auth
//	  OLMSYNC_GIT_TOKEN, then GIT_TOKEN             a token as the password, for any host; the
//	                                                username is OLMSYNC_GIT_USERNAME, else
//	                                                "x-access-token" for github.com, else "git"
//	  GITHUB_TOKEN                                  only to github.com, or to the host of
//	                                                GITHUB_SERVER_URL when that is set
//	  CI_JOB_TOKEN                                  only to the host of CI_SERVER_URL (GitLab CI)
//	  user:password@ in the URL                     used when Fetch is given no Credentials
//	ssh:
//	  OLMSYNC_SSH_KEY (a key file), OLMSYNC_SSH_KEY_PASSPHRASE
//	  SSH_AUTH_SOCK                                 an ssh-agent, when no key file is named
//	  ~/.ssh/id_ed25519, id_ecdsa, id_rsa           the first that exists, when neither
//	  OLMSYNC_SSH_KNOWN_HOSTS (a file), else SSH_KNOWN_HOSTS (a list of files, as go-git
//	  reads it), else ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts: host keys are always
//	  checked against them unless Credentials.InsecureIgnoreHostKey is set.
//
// Credentials are never sent over plain http unless FetchRequest.AllowInsecureHTTP is set.
package sources
