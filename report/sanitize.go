package report

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// What a report says comes from the pull request under check: file names, object names,
// messages quoting manifests. A format read by a terminal, a CI log, a browser or a code
// review (every format but JSON, whose encoder escapes control characters and whose
// readers are programs) must not let it drive the reader: an escape sequence recolouring a
// log, a line break starting a workflow command, a bidirectional override reordering what
// a reviewer reads. sanitized copies a report with every such character written out as
// Go writes it (\x1b, \u202e).

// isUnsafeRune reports a character a report writes out escaped: a control character (C0,
// DEL, C1) other than a line feed or tab, a bidirectional formatting character, or
// another invisible formatting character (a zero-width space or joiner, a soft hyphen).
func isUnsafeRune(c rune) bool {
	if unicode.IsControl(c) {
		return c != '\n' && c != '\t'
	}
	return unicode.Is(unicode.Bidi_Control, c) || unicode.Is(unicode.Cf, c)
}

// escapeUnsafe writes out the unsafe characters of s (isUnsafeRune); a Windows line break
// counts as a line feed.
func escapeUnsafe(s string) string {
	if !strings.ContainsFunc(s, isUnsafeRune) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, c := range s {
		if isUnsafeRune(c) {
			b.WriteString(strings.Trim(strconv.QuoteRuneToASCII(c), "'"))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// sanitized is a deep copy of r with escapeUnsafe applied to every string it holds.
func sanitized(r *Report) *Report {
	v := reflect.ValueOf(r).Elem()
	out := reflect.New(v.Type()).Elem()
	sanitizeValue(out, v)
	return out.Addr().Interface().(*Report)
}

func sanitizeValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.String:
		dst.SetString(escapeUnsafe(src.String()))
	case reflect.Struct:
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				sanitizeValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Elem().Type())
		sanitizeValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			sanitizeValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for iter := src.MapRange(); iter.Next(); {
			k := reflect.New(iter.Key().Type()).Elem()
			sanitizeValue(k, iter.Key())
			val := reflect.New(iter.Value().Type()).Elem()
			sanitizeValue(val, iter.Value())
			m.SetMapIndex(k, val)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		inner := reflect.New(src.Elem().Type()).Elem()
		sanitizeValue(inner, src.Elem())
		dst.Set(inner)
	default:
		dst.Set(src)
	}
}
