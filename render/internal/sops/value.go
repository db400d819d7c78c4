package sops

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// encValue is sops's format of an encrypted value (its aes package's): the ciphertext,
// nonce and GCM tag in base64, and the type of the plaintext.
var encValue = regexp.MustCompile(`^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]`)

// comment is a comment of a YAML, dotenv or INI document, which sops may encrypt too.
type comment struct {
	value  string
	inline bool
}

// errNotSOPSValue is a value that is not in sops's format: the value itself is never in
// the message (it may be plaintext something added to an encrypted document).
var errNotSOPSValue = errors.New("Input string <redacted> does not match sops' data format")

// decryptValue decrypts one value as sops's AES-GCM cipher does: the nonce is as long as
// the IV written (sops writes 32 bytes), the ciphertext is data||tag, and the additional
// data is the value's path. The plaintext is converted to the type the value records.
// Errors never hold the plaintext.
func decryptValue(value string, key []byte, aad string) (any, error) {
	if value == "" {
		return "", nil
	}
	m := encValue.FindStringSubmatch(value)
	if m == nil {
		return nil, errNotSOPSValue
	}
	var parts [3][]byte
	for i, name := range []string{"data", "iv", "tag"} {
		b, err := base64.StdEncoding.DecodeString(m[i+1])
		if err != nil {
			return nil, fmt.Errorf("Error base64-decoding %s: %w", name, err)
		}
		parts[i] = b
	}
	data, iv, tag := parts[0], parts[1], parts[2]
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(iv) == 0 {
		return nil, errors.New("Could not decrypt with AES_GCM: the IV is empty")
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(iv))
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, iv, append(data, tag...), []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("Could not decrypt with AES_GCM: %w", err)
	}
	s := string(plain)
	var v any
	switch typ := m[4]; typ {
	case "str":
		return s, nil
	case "bytes":
		return plain, nil
	case "comment":
		return comment{value: s}, nil
	case "int":
		v, err = strconv.Atoi(s)
	case "float":
		v, err = strconv.ParseFloat(s, 64)
	case "bool":
		v, err = strconv.ParseBool(s)
	case "time":
		var t time.Time
		err = t.UnmarshalText(plain)
		v = t
	default:
		return nil, fmt.Errorf("Unknown datatype: %s", typ)
	}
	if err != nil {
		// strconv's messages quote the plaintext.
		return nil, fmt.Errorf("the decrypted value is not of its type %s", m[4])
	}
	return v, nil
}

// rules are the metadata that say which values sops encrypted; at most one is set (sops
// refuses more), and with none, keys ending in _unencrypted are left in plaintext.
type rules struct {
	unencryptedSuffix, encryptedSuffix string
	unencryptedRegex, encryptedRegex   *regexp.Regexp
	unencryptedComment, encryptedComm  *regexp.Regexp
}

// encrypted is sops's decision (Tree.shouldBeEncrypted) for a value at path, under the
// comments that precede it at each level.
func (r *rules) encrypted(path []string, comments [][]string, isComment bool) bool {
	enc := true
	if r.unencryptedSuffix != "" {
		for _, p := range path {
			if strings.HasSuffix(p, r.unencryptedSuffix) {
				enc = false
				break
			}
		}
	}
	if r.encryptedSuffix != "" {
		enc = anyOf(path, func(p string) bool { return strings.HasSuffix(p, r.encryptedSuffix) })
	}
	if r.unencryptedRegex != nil && anyOf(path, r.unencryptedRegex.MatchString) {
		enc = false
	}
	if r.encryptedRegex != nil {
		enc = anyOf(path, r.encryptedRegex.MatchString)
	}
	if r.unencryptedComment != nil {
		for _, cs := range comments {
			if anyOf(cs, r.unencryptedComment.MatchString) {
				enc = false
				break
			}
		}
	}
	if r.encryptedComm != nil {
		enc = false
		last := len(comments) - 1
	outer:
		for i, cs := range comments {
			for j, c := range cs {
				// The comment that matches is not itself encrypted: only what follows it.
				if isComment && i == last && j == len(comments[last])-1 {
					continue
				}
				if r.encryptedComm.MatchString(c) {
					enc = true
					break outer
				}
			}
		}
	}
	return enc
}

func anyOf(s []string, f func(string) bool) bool {
	for _, v := range s {
		if f(v) {
			return true
		}
	}
	return false
}

// walker decrypts a tree in place as sops's Tree.Decrypt walks it: every leaf the rules
// say is encrypted, with the additional data "k1:k2:…:" (the keys to it; the items of a
// list keep their list's path). A comment that does not decrypt stays as written (sops
// takes it for one written before sops encrypted comments).
type walker struct {
	key   []byte
	rules *rules
}

func (w *walker) leaf(in any, path []string, comments [][]string) (any, error) {
	c, isComment := in.(comment)
	if !w.rules.encrypted(path, comments, isComment) {
		return in, nil
	}
	aad := strings.Join(path, ":") + ":"
	if isComment {
		v, err := decryptValue(c.value, w.key, aad)
		if err != nil {
			return c, nil
		}
		// sops's decrypted comment is no longer inline: it is written above its value.
		if dc, ok := v.(comment); ok {
			return dc, nil
		}
		if s, ok := v.(string); ok {
			return comment{value: s}, nil
		}
		return c, nil
	}
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("Expected encrypted value as string, but got %T", in)
	}
	v, err := decryptValue(s, w.key, aad)
	if err != nil {
		return nil, fmt.Errorf("Could not decrypt value: %w", err)
	}
	return v, nil
}

func (w *walker) value(in any, path []string, comments [][]string) (any, error) {
	switch t := in.(type) {
	case branch:
		return t, w.branch(t, path, comments)
	case []any:
		return t, w.list(t, path, comments)
	case nil:
		return nil, nil
	case []byte:
		return w.leaf(string(t), path, comments)
	default:
		return w.leaf(t, path, comments)
	}
}

func (w *walker) list(in []any, path []string, comments [][]string) error {
	comments = append(comments[:len(comments):len(comments)], nil)
	top := len(comments) - 1
	for i, v := range in {
		c, isComment := v.(comment)
		if isComment {
			comments[top] = append(comments[top], c.value)
		}
		nv, err := w.value(v, path, comments)
		if err != nil {
			return err
		}
		in[i] = nv
		if !isComment {
			comments[top] = nil
		}
	}
	return nil
}

func (w *walker) branch(in branch, path []string, comments [][]string) error {
	comments = append(comments[:len(comments):len(comments)], nil)
	top := len(comments) - 1
	for i, it := range in {
		if c, ok := it.key.(comment); ok {
			comments[top] = append(comments[top], c.value)
			nk, err := w.leaf(c, path, comments)
			if err != nil {
				return err
			}
			in[i].key = nk
			continue
		}
		c, valueIsComment := it.value.(comment)
		if valueIsComment {
			comments[top] = append(comments[top], c.value)
		}
		key, ok := it.key.(string)
		if !ok {
			return fmt.Errorf("Tree contains a non-string key (type %T). Only string keys are supported", it.key)
		}
		nv, err := w.value(it.value, append(path[:len(path):len(path)], key), comments)
		if err != nil {
			return err
		}
		in[i].value = nv
		if !valueIsComment {
			comments[top] = nil
		}
	}
	return nil
}
