// Package pullsecret turns the pull secrets a CatalogSource names (spec.secrets:
// kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg Secrets in the catalog's
// namespace) into the registry credentials olmsync pulls the catalog's image and every
// bundle image of the catalog with, through go-containerregistry's kubernetes keychain,
// falling back to the process's own keychain (its docker config) for registries the
// secrets do not name. Credentials never leave it in an error: a Secret that cannot be
// read or parsed is named, never shown, and Redact takes every credential of the secrets
// out of a message before it reaches a log, an event or a status.
package pullsecret
