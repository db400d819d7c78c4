package sops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// NoKeyError is a document whose data key none of the identities opens.
type NoKeyError struct {
	// Recipients are the document's age recipients (public keys), for the message.
	Recipients []string
	// Groups is how many key groups the data key is split across (Shamir), when more than
	// one; Threshold is how many of them open it, and Opened how many the identities opened.
	Groups, Threshold, Opened int
}

func (e *NoKeyError) Error() string {
	return fmt.Sprintf("no age identity opens the data key; the file's age recipients: %s", strings.Join(e.Recipients, ", "))
}

// LoadError is a document that is not one sops wrote in its format.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// TreeError is a value that does not decrypt (not in sops's format, tampered with, or
// bound to another path); its message holds no value.
type TreeError struct{ Err error }

func (e *TreeError) Error() string { return "Error walking tree: " + e.Err.Error() }
func (e *TreeError) Unwrap() error { return e.Err }

// EmitError is plaintext that cannot be written in the output format.
type EmitError struct{ Err error }

func (e *EmitError) Error() string { return e.Err.Error() }
func (e *EmitError) Unwrap() error { return e.Err }

// errMetadataNotFound is sops's message for a document without its metadata.
var errMetadataNotFound = errors.New("sops metadata not found")

// Decrypt decrypts data, a document of format in that sops encrypted, with the age
// identities, and writes the plaintext in format out. As Flux's default decryptor, it
// does not verify the document's MAC (see render's Decryption). Crafted input never
// panics it into the caller: a panic becomes an EmitError.
func Decrypt(data []byte, in, out Format, ids []age.Identity) (plain []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			plain, err = nil, &EmitError{Err: errors.New("internal error")}
		}
	}()
	tree, m, err := loadEncrypted(data, in)
	if err != nil {
		return nil, &LoadError{Err: err}
	}
	key, err := m.dataKey(ids)
	if err != nil {
		return nil, err
	}
	w := &walker{key: key, rules: m.rules}
	for _, b := range tree {
		if err := w.branch(b, nil, nil); err != nil {
			return nil, &TreeError{Err: err}
		}
	}
	plain, err = emit(tree, out)
	if err != nil {
		return nil, &EmitError{Err: err}
	}
	return plain, nil
}

type ageKey struct{ recipient, enc string }

type metadata struct {
	groups [][]ageKey
	// threshold is shamir_threshold: how many key groups' shares make the data key (0:
	// every group's, as sops reads it).
	threshold int
	rules     *rules
}

// loadEncrypted reads a document and takes its sops metadata out of it: a top-level
// "sops" mapping (YAML, JSON, binary), sops_* keys (dotenv) or a [sops] section (INI),
// whose nested keys are flattened as a__list_0__map_b.
func loadEncrypted(data []byte, f Format) ([]branch, *metadata, error) {
	tree, err := load(data, f)
	if err != nil {
		return nil, nil, err
	}
	var meta map[string]any
	switch f {
	case Dotenv:
		if len(tree) == 0 {
			return nil, nil, errMetadataNotFound
		}
		flat := branch{}
		kept := branch{}
		for _, it := range tree[0] {
			if k, ok := it.key.(string); ok && strings.HasPrefix(k, "sops_") {
				flat = append(flat, item{key: strings.TrimPrefix(k, "sops_"), value: it.value})
				continue
			}
			kept = append(kept, it)
		}
		tree[0] = kept
		if len(flat) == 0 {
			return nil, nil, errMetadataNotFound
		}
		meta = unflatten(flat, false)
	default:
		var found branch
		seen := false
		for bi, b := range tree {
			kept := branch{}
			for _, it := range b {
				if it.key != "sops" {
					kept = append(kept, it)
					continue
				}
				if bi == 0 {
					if seen {
						return nil, nil, errors.New("Found duplicate sops entry")
					}
					seen = true
					mb, ok := it.value.(branch)
					if !ok {
						return nil, nil, errors.New("Found sops entry that is not a mapping")
					}
					found = mb
				}
			}
			tree[bi] = kept
		}
		if found == nil {
			return nil, nil, errMetadataNotFound
		}
		if f == INI {
			meta = unflatten(found, true)
		} else {
			meta = toMap(found)
		}
	}
	m, err := readMetadata(meta)
	if err != nil {
		return nil, nil, err
	}
	return tree, m, nil
}

// toMap is a mapping as plain Go values, comments left out.
func toMap(b branch) map[string]any {
	out := map[string]any{}
	for _, it := range b {
		if k, ok := it.key.(string); ok {
			out[k] = toPlain(it.value)
		}
	}
	return out
}

func toPlain(v any) any {
	switch t := v.(type) {
	case branch:
		return toMap(t)
	case []any:
		var l []any
		for _, e := range t {
			if _, ok := e.(comment); !ok {
				l = append(l, toPlain(e))
			}
		}
		return l
	}
	return v
}

// unflatten rebuilds the metadata sops flattens into one level: "age__list_0__map_enc"
// is age[0].enc. INI escapes the newlines of values.
func unflatten(b branch, escaped bool) map[string]any {
	root := map[string]any{}
	for _, it := range b {
		k, ok := it.key.(string)
		if !ok {
			continue
		}
		v := it.value
		if s, ok := v.(string); ok && escaped {
			v = strings.ReplaceAll(s, `\n`, "\n")
		}
		setFlat(root, k, v)
	}
	return root
}

var flatToken = regexp.MustCompile(`__(map|list)_`)

func setFlat(root map[string]any, key string, v any) {
	// Tokens: the first name, then (kind, name) pairs.
	idx := flatToken.FindAllStringSubmatchIndex(key, -1)
	names := []string{}
	kinds := []string{}
	prev := 0
	kind := "map"
	for _, m := range idx {
		names, kinds = append(names, key[prev:m[0]]), append(kinds, kind)
		kind, prev = key[m[2]:m[3]], m[1]
	}
	names, kinds = append(names, key[prev:]), append(kinds, kind)
	// Lists are maps keyed by index here: readMetadata reads them in index order.
	cur := root
	for i, name := range names {
		_ = kinds[i]
		if i == len(names)-1 {
			cur[name] = v
			return
		}
		next, ok := cur[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[name] = next
		}
		cur = next
	}
}

// list is a metadata list: a list (YAML, JSON) or an unflattened one (a map by index).
func list(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case map[string]any:
		var out []any
		for i := 0; ; i++ {
			e, ok := t[strconv.Itoa(i)]
			if !ok {
				return out
			}
			out = append(out, e)
		}
	}
	return nil
}

func str(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func ageKeys(g map[string]any) []ageKey {
	var out []ageKey
	for _, e := range list(g["age"]) {
		if k, ok := e.(map[string]any); ok {
			out = append(out, ageKey{recipient: str(k, "recipient"), enc: str(k, "enc")})
		}
	}
	return out
}

var otherKeyTypes = []string{"pgp", "kms", "gcp_kms", "hckms", "azure_kv", "hc_vault"}

func hasKeys(g map[string]any) bool {
	for _, t := range append([]string{"age"}, otherKeyTypes...) {
		if len(list(g[t])) > 0 {
			return true
		}
	}
	return false
}

func readMetadata(m map[string]any) (*metadata, error) {
	md := &metadata{rules: &rules{}}
	switch {
	case hasKeys(m):
		md.groups = [][]ageKey{ageKeys(m)}
	case len(list(m["key_groups"])) > 0:
		for _, g := range list(m["key_groups"]) {
			gm, _ := g.(map[string]any)
			md.groups = append(md.groups, ageKeys(gm))
		}
	default:
		return nil, errors.New("No keys found in file")
	}
	if t := str(m, "shamir_threshold"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return nil, errors.New("the file's shamir_threshold is not a count")
		}
		md.threshold = n
	}
	set := 0
	for _, r := range []struct {
		name string
		s    *string
		re   **regexp.Regexp
	}{
		{"unencrypted_suffix", &md.rules.unencryptedSuffix, nil},
		{"encrypted_suffix", &md.rules.encryptedSuffix, nil},
		{"unencrypted_regex", nil, &md.rules.unencryptedRegex},
		{"encrypted_regex", nil, &md.rules.encryptedRegex},
		{"unencrypted_comment_regex", nil, &md.rules.unencryptedComment},
		{"encrypted_comment_regex", nil, &md.rules.encryptedComm},
	} {
		v := str(m, r.name)
		if v == "" {
			continue
		}
		set++
		if r.s != nil {
			*r.s = v
			continue
		}
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, fmt.Errorf("the file's %s is not a regular expression", r.name)
		}
		*r.re = re
	}
	if set > 1 {
		return nil, errors.New("Cannot use more than one of encrypted_suffix, unencrypted_suffix, encrypted_regex, unencrypted_regex, encrypted_comment_regex, or unencrypted_comment_regex in the same file")
	}
	if set == 0 {
		md.rules.unencryptedSuffix = "_unencrypted"
	}
	return md, nil
}

// maxDataKey bounds what an age ciphertext may decrypt to: sops's data key is 32 bytes.
const maxDataKey = 1024

// dataKey opens the document's data key with the identities: the enc of an age
// recipient, an armored age file.
func (m *metadata) dataKey(ids []age.Identity) ([]byte, error) {
	var recipients []string
	for _, g := range m.groups {
		for _, k := range g {
			recipients = append(recipients, k.recipient)
		}
	}
	if len(m.groups) > 1 {
		return m.combinedKey(ids, recipients)
	}
	if len(ids) > 0 {
		for _, g := range m.groups {
			if key, ok := openAny(g, ids); ok {
				return key, nil
			}
		}
	}
	return nil, &NoKeyError{Recipients: recipients}
}

// combinedKey is the data key of a document whose key groups each hold a Shamir share of
// it (sops's key_groups with shamir_threshold): the share of every group one of the
// identities opens, combined once there are threshold of them.
func (m *metadata) combinedKey(ids []age.Identity, recipients []string) ([]byte, error) {
	threshold := m.threshold
	if threshold == 0 {
		threshold = len(m.groups)
	}
	var shares [][]byte
	for _, g := range m.groups {
		if share, ok := openAny(g, ids); ok {
			shares = append(shares, share)
		}
	}
	if len(shares) < threshold {
		return nil, &NoKeyError{Recipients: recipients, Groups: len(m.groups), Threshold: threshold, Opened: len(shares)}
	}
	key, err := combineShares(shares[:threshold])
	if err != nil {
		return nil, &LoadError{Err: err}
	}
	return key, nil
}

// openAny opens what a key group holds (the data key, or its share of it) with the first
// of the group's age recipients the identities decrypt.
func openAny(g []ageKey, ids []age.Identity) ([]byte, bool) {
	if len(ids) == 0 {
		return nil, false
	}
	for _, k := range g {
		r, err := age.Decrypt(armor.NewReader(strings.NewReader(k.enc)), ids...)
		if err != nil {
			continue
		}
		key, err := io.ReadAll(io.LimitReader(r, maxDataKey+1))
		if err != nil || len(key) > maxDataKey {
			continue
		}
		return bytes.Clone(key), true
	}
	return nil, false
}
