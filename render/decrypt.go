package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/olmsync/olmsync/render/internal/sops"
)

// The names Flux gives the parts of SOPS decryption, so that a repository written for a
// Flux Kustomization decrypts the same way under a Sync.
const (
	// AgeKeyExtension ends the name of each key of the decryption Secret that holds age
	// identities (Flux's DecryptionAgeExt); the Secret's other keys are ignored.
	AgeKeyExtension = ".agekey"
	// DecryptAnnotation, set to DecryptDisabled on an object, leaves it encrypted: it
	// is applied as written (Flux's kustomize.toolkit.fluxcd.io/decrypt).
	DecryptAnnotation = "kustomize.toolkit.fluxcd.io/decrypt"
	DecryptDisabled   = "disabled"
	// maxEncryptedFileSize bounds a generator source olmsync decrypts (Flux's bound).
	maxEncryptedFileSize = 5 << 20
)

// ErrDecryption marks every failure to decrypt; the messages never hold a key or a
// decrypted value.
var ErrDecryption = errors.New("decryption failed")

// Decryption decrypts SOPS-encrypted objects and secretGenerator sources with age
// identities, as a Flux Kustomization's spec.decryption with provider sops does: after
// kustomize's build, every object with SOPS metadata (a sops field holding a mac), and
// every value of a Secret's data that is a SOPS document; before it, every file a
// secretGenerator (files, envs) or a patch (path) reads that carries SOPS's marker for
// its format. Only age keys are used: a file whose data key is encrypted for PGP, a KMS
// or Vault only cannot be decrypted. A nil *Decryption decrypts nothing: encrypted
// objects stay as written (`olmsync check` reads them so, as opaque Secrets).
type Decryption struct {
	identities []age.Identity
}

// NewDecryption reads the age identities of a decryption Secret's data: every key whose
// name ends in AgeKeyExtension holds one identity per line (empty lines and lines
// starting with # are skipped). Only native X25519 and post-quantum hybrid identities
// are read: an age plugin identity would run a program, and is refused. Errors name the
// key, the line and source (the Secret, for the message), never what the line holds.
func NewDecryption(source string, data map[string][]byte) (*Decryption, error) {
	from := ""
	if source != "" {
		from = " from " + source
	}
	d := &Decryption{}
	for _, name := range sortedKeys(data) {
		if path.Ext(name) != AgeKeyExtension {
			continue
		}
		ids, err := parseAgeIdentities(data[name])
		if err != nil {
			return nil, fmt.Errorf("failed to import '%s' data%s: %w", name, from, err)
		}
		d.identities = append(d.identities, ids...)
	}
	return d, nil
}

func parseAgeIdentities(b []byte) ([]age.Identity, error) {
	var out []age.Identity
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		var (
			id  age.Identity
			err error
		)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "AGE-PLUGIN-"):
			return nil, fmt.Errorf("line %d is an age plugin identity, which would run a program: olmsync reads native age identities only", n)
		case strings.HasPrefix(line, "AGE-SECRET-KEY-PQ-1"):
			id, err = age.ParseHybridIdentity(line)
		default:
			id, err = age.ParseX25519Identity(line)
		}
		if err != nil {
			// age's message may quote part of the key: it is left out.
			return nil, fmt.Errorf("line %d is not an age identity (AGE-SECRET-KEY-1…)", n)
		}
		out = append(out, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Identities is how many age identities the Decryption holds.
func (d *Decryption) Identities() int {
	if d == nil {
		return 0
	}
	return len(d.identities)
}

// IsEncryptedSecret reports whether u is a Secret that still carries SOPS metadata and
// does not opt out of decryption: applied as it is, it would put ciphertext into the
// cluster, so it is refused (Flux's check before its apply).
func IsEncryptedSecret(u *unstructured.Unstructured) bool {
	if u.GetKind() != "Secret" || u.GetAPIVersion() != "v1" || decryptionDisabled(u.GetAnnotations()) {
		return false
	}
	_, found := u.Object["sops"]
	return found
}

// EncryptedSecretMessage is Flux's refusal of an encrypted Secret, for an object named
// as Flux names it (Kind/namespace/name).
func EncryptedSecretMessage(u *unstructured.Unstructured) string {
	id := u.GetKind() + "/" + u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		id = u.GetKind() + "/" + ns + "/" + u.GetName()
	}
	return fmt.Sprintf("%s is SOPS encrypted, configuring decryption is required for this secret to be reconciled", id)
}

func decryptionDisabled(ann map[string]string) bool {
	return strings.EqualFold(ann[DecryptAnnotation], DecryptDisabled)
}

// sopsMarkers are the bytes that say a file of each format is SOPS-encrypted (Flux's
// markers): a file without its format's marker is read as it is.
var sopsMarkers = map[sops.Format][]byte{
	sops.Binary: []byte(`"mac": "ENC[`),
	sops.Dotenv: []byte("sops_mac=ENC["),
	sops.INI:    []byte("[sops]"),
	sops.JSON:   []byte(`"mac": "ENC[`),
	sops.YAML:   []byte("mac: ENC["),
}

// formatForPath is the SOPS format of a file by its name, as sops and Flux decide it;
// .dockerconfigjson is JSON.
func formatForPath(p string) sops.Format {
	if strings.HasSuffix(p, ".dockerconfigjson") {
		return sops.JSON
	}
	return sops.FormatForPath(p)
}

// formatFromMarker is the format a Secret value's SOPS marker says, if any.
func formatFromMarker(b []byte) (sops.Format, bool) {
	// Binary and JSON share a marker: JSON is what it decodes as.
	for _, f := range []sops.Format{sops.YAML, sops.JSON, sops.Dotenv, sops.INI} {
		if bytes.Contains(b, sopsMarkers[f]) {
			return f, true
		}
	}
	return 0, false
}

// decrypt turns a SOPS document of format in into plaintext of format out, as Flux's
// SopsDecryptWithFormat does, with Flux's messages. As in Flux, whose decryptor verifies
// the MAC only when told to (checkSopsMac, which kustomize-controller never sets), the
// MAC is not verified: kustomize changes the objects it builds, and a generator source
// is decrypted as Flux decrypts it. Each value is still authenticated by AES-GCM with its
// path as additional data, so a value changed or moved fails to decrypt.
func (d *Decryption) decrypt(data []byte, in, out sops.Format) ([]byte, error) {
	plain, err := sops.Decrypt(data, in, out, d.identities)
	var (
		le *sops.LoadError
		ke *sops.NoKeyError
		te *sops.TreeError
	)
	switch {
	case err == nil:
		return plain, nil
	case errors.As(err, &le):
		msg, _, _ := strings.Cut(le.Error(), "\n")
		return nil, fmt.Errorf("failed to load encrypted %s data: %s", in, msg)
	case errors.As(err, &ke):
		return nil, fmt.Errorf("cannot get sops data key: %s", d.noKeyReason(ke))
	case errors.As(err, &te):
		return nil, fmt.Errorf("error decrypting sops tree: %w", redact(err))
	}
	return nil, fmt.Errorf("failed to emit encrypted %s file as decrypted %s: %w", in, out, err)
}

// noKeyReason says why no data key could be had, with the file's age recipients (public
// keys), so that the user sees which identity is missing.
func (d *Decryption) noKeyReason(e *sops.NoKeyError) string {
	recipients := strings.Join(e.Recipients, ", ")
	switch {
	case e.Groups > 1:
		return fmt.Sprintf("the file's data key is split across %d key groups (Shamir), %d of which open it, and the decryption Secret's age identities open %d; its age recipients: %s",
			e.Groups, e.Threshold, e.Opened, recipients)
	case len(e.Recipients) == 0:
		return "the file's data key is encrypted for no age recipient, and olmsync decrypts with age identities only"
	case len(d.identities) == 0:
		return fmt.Sprintf("the decryption Secret holds no age identity (a key ending in %s); the file's age recipients: %s", AgeKeyExtension, recipients)
	}
	return fmt.Sprintf("none of the %d age identities of the decryption Secret is a recipient of the file; its age recipients: %s", len(d.identities), recipients)
}

// redact removes a value quoted where sops's messages quote it (Flux's safeDecrypt): it
// may be plaintext. The sops package never quotes one; this holds if it ever does.
func redact(err error) error {
	const prefix, suffix = "Input string ", " does not match sops' data format"
	msg := err.Error()
	i, j := strings.Index(msg, prefix), strings.Index(msg, suffix)
	if i < 0 || j < i {
		return err
	}
	return errors.New(msg[:i] + prefix + "<redacted>" + msg[j:])
}

// decryptObjects decrypts, in place, the objects of one app's build (see Decryption).
func (d *Decryption) decryptObjects(app string, objs []*Object) error {
	if d == nil {
		return nil
	}
	for _, o := range objs {
		if err := d.decryptObject(o); err != nil {
			return &BuildError{App: app, File: o.Source.File, Line: o.Source.Line, Err: fmt.Errorf("%w: %s: %w", ErrDecryption, objectName(o), err)}
		}
	}
	return nil
}

func objectName(o *Object) string {
	return fmt.Sprintf("%s %s", o.Manifest.GetKind(), namespacedName(o.Manifest))
}

func namespacedName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

func (d *Decryption) decryptObject(o *Object) error {
	u := o.Manifest
	if decryptionDisabled(u.GetAnnotations()) {
		return nil
	}
	if meta, ok := u.Object["sops"].(map[string]any); ok && meta["mac"] != nil && meta["mac"] != "" {
		in, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		out, err := d.decrypt(in, sops.JSON, sops.JSON)
		if err != nil {
			return fmt.Errorf("failed to decrypt and format '%s' %s data: %w", namespacedName(u), u.GetKind(), err)
		}
		// apimachinery's json decodes numbers as unstructured objects hold them (int64 for
		// integral values, as render's own objects).
		m := map[string]any{}
		if err := utiljson.Unmarshal(out, &m); err != nil {
			return fmt.Errorf("failed to unmarshal decrypted '%s' %s: the result is not an object", namespacedName(u), u.GetKind())
		}
		o.Manifest = &unstructured.Unstructured{Object: m}
		return nil
	}
	if u.GetKind() != "Secret" {
		return nil
	}
	// A value of a Secret's data may be a whole SOPS document (a file a secretGenerator
	// took as it is): each is decrypted into the format its key's name says.
	data, _ := u.Object["data"].(map[string]any)
	for _, key := range sortedKeys(data) {
		s, ok := data[key].(string)
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue // the API server will say what is wrong with it
		}
		in, ok := formatFromMarker(raw)
		if !ok {
			continue
		}
		out, err := d.decrypt(raw, in, formatForPath(key))
		if err != nil {
			return fmt.Errorf("failed to decrypt and format '%s' Secret field '%s': %w", namespacedName(u), key, err)
		}
		data[key] = base64.StdEncoding.EncodeToString(out)
	}
	return nil
}

// decryptSource decrypts one file a secretGenerator or a patch reads, when it carries
// SOPS's marker for the format its name says (envs default to dotenv); it returns nil
// for a file that is not encrypted.
func (d *Decryption) decryptSource(data []byte, name string, env bool) ([]byte, error) {
	f := formatForPath(name)
	if env && f == sops.Binary {
		f = sops.Dotenv
	}
	if !bytes.Contains(data, sopsMarkers[f]) {
		return nil, nil
	}
	if len(data) > maxEncryptedFileSize {
		return nil, fmt.Errorf("cannot decrypt file with size (%d bytes) exceeding limit (%d)", len(data), maxEncryptedFileSize)
	}
	return d.decrypt(data, f, f)
}

// decryptSources decrypts, for kustomize, the files k's secretGenerators (files, envs) and
// patches (path) read, when they are SOPS-encrypted: the plaintext replaces them in the
// overlay filesystem only, never on disk. Which files, and their formats, are Flux's
// (DecryptSources): a generator file's format is its key's, an env file's its name's
// (dotenv when the name says none).
func (pl *planner) decryptSources(k *kustomization) error {
	d := pl.opts.Decryption
	if d == nil {
		return nil
	}
	visit := func(field string, i int, ref, formatName string, env bool) error {
		p, ok := join(k.Dir, ref)
		if ref == "" || !ok || !pl.r.isFile(p) {
			return nil // missing or out of the repository: the planner says so elsewhere
		}
		if _, done := pl.p.overrides[p]; done {
			return nil
		}
		data, err := pl.r.readFile(p)
		if err != nil {
			return err
		}
		plain, err := d.decryptSource(data, formatName, env)
		if err != nil {
			return &locatedError{file: p, line: 1, err: fmt.Errorf("%w: %s (read by %s of %s:%d): %w",
				ErrDecryption, p, field, k.File, seqItemLine(k.Node, field, i), err)}
		}
		if plain != nil {
			pl.p.overrides[p] = plain
		}
		return nil
	}
	for i, g := range k.K.SecretGenerator {
		for _, f := range g.FileSources {
			key, file, found := strings.Cut(f, "=")
			if !found {
				file = f
			}
			if err := visit("secretGenerator", i, file, key, false); err != nil {
				return err
			}
		}
		for _, f := range append(slices.Clone(g.EnvSources), g.EnvSource) {
			if err := visit("secretGenerator", i, f, f, true); err != nil {
				return err
			}
		}
	}
	for i, p := range k.K.Patches {
		if err := visit("patches", i, p.Path, p.Path, false); err != nil {
			return err
		}
	}
	return nil
}
