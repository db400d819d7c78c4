package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// A stream of objects is read one object at a time, so a 10 MB catalog of one object per
// line never sits in memory as a whole, and each object knows the line it starts on.

// objectFunc receives one object of a stream, as JSON, with the line it starts on.
type objectFunc func(data []byte, line int) error

// StreamError is a stream that stopped being readable at a line: what came before it was
// read, what comes after it is lost.
type StreamError struct {
	Line int
	Err  error
}

func (e *StreamError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *StreamError) Unwrap() error { return e.Err }

// MaxCatalogBytes bounds one file of a catalog as a whole (a file-based catalog's JSON,
// read value by value, each value under safeyaml's document limit): what the catalog
// model holds grows with it. The community catalog of 7,022 bundles is 9.4 MB, the
// largest published indexes some tens of MB.
const MaxCatalogBytes = 256 << 20

// maxCatalogBytes is MaxCatalogBytes, which a test lowers.
var maxCatalogBytes int64 = MaxCatalogBytes

// errCatalogTooLarge stops a stream past MaxCatalogBytes.
var errCatalogTooLarge = errors.New("catalog file over the limit")

// readJSONStream reads concatenated JSON values (one per line, or pretty-printed, or both).
// A value over safeyaml's document limit is refused while it is read, before the decoder
// holds it whole, and the file past MaxCatalogBytes.
func readJSONStream(r io.Reader, fn objectFunc) error {
	lines := &lineIndex{r: r, limit: safeyaml.DefaultLimits.MaxDocumentBytes, total: maxCatalogBytes}
	dec := json.NewDecoder(lines)
	for {
		// More skips the whitespace before the next value, so the decoder's offset is
		// where that value starts.
		dec.More()
		start := dec.InputOffset()
		lines.start = start
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, errCatalogTooLarge) {
			return &StreamError{Line: lines.line(start), Err: &safeyaml.LimitError{
				Msg: fmt.Sprintf("file of more than %d bytes; at most %d of a catalog file are read", lines.total, lines.total)}}
		}
		if errors.Is(err, errValueTooLarge) || err == nil && int64(len(raw)) > lines.limit {
			return &StreamError{Line: lines.line(start), Err: &safeyaml.LimitError{
				Msg: fmt.Sprintf("JSON value of more than %d bytes; at most %d are read", lines.limit, lines.limit)}}
		}
		if err != nil {
			offset := start
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				offset = syntax.Offset
			}
			return &StreamError{Line: lines.line(offset), Err: err}
		}
		if err := fn(raw, lines.line(start)); err != nil {
			return err
		}
	}
}

// lineIndex passes a reader through and remembers where its newlines are. When limit is
// set, it fails once more than limit bytes (and the decoder's read-ahead) were read since
// start, the offset of the value being decoded.
type lineIndex struct {
	r        io.Reader
	read     int64
	newlines []int64
	limit    int64
	start    int64
	// total, when set, bounds what is read of the whole stream.
	total int64
}

// errValueTooLarge stops a JSON decoder reading a value past the limit.
var errValueTooLarge = errors.New("JSON value over the limit")

// readAhead is how far past a value json.Decoder may read (it reads in chunks).
const readAhead = 64 << 10

func (l *lineIndex) Read(p []byte) (int, error) {
	if l.total > 0 {
		rest := l.total - l.read
		if rest <= 0 {
			return 0, errCatalogTooLarge
		}
		if int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	if l.limit > 0 {
		allowed := l.limit + readAhead - (l.read - l.start)
		if allowed <= 0 {
			return 0, errValueTooLarge
		}
		if int64(len(p)) > allowed {
			p = p[:allowed]
		}
	}
	n, err := l.r.Read(p)
	for i, chunk := 0, p[:n]; ; {
		j := bytes.IndexByte(chunk[i:], '\n')
		if j < 0 {
			break
		}
		l.newlines = append(l.newlines, l.read+int64(i+j))
		i += j + 1
	}
	l.read += int64(n)
	return n, err
}

// line is the 1-based line of a byte offset.
func (l *lineIndex) line(offset int64) int {
	return 1 + sort.Search(len(l.newlines), func(i int) bool { return l.newlines[i] >= offset })
}

// readYAMLStream reads the documents of a YAML stream ("---" between them), handing each
// non-empty one on as JSON. A document that does not parse stops the stream, with the
// error's line counted from the top of the file.
//
// Every document passes the bounded reader (internal/safeyaml) first, against one budget
// for the stream: a document over its limits, or whose aliases expand too far, stops the
// stream before the decoder expands anything.
func readYAMLStream(r io.Reader, fn objectFunc) error {
	br := bufio.NewReader(r)
	var doc bytes.Buffer
	docLine, lineNo := 1, 0
	// chunkLine is the line of the file the buffer's first line is: the "---" line.
	chunkLine := 1
	limits := safeyaml.NewReader("", safeyaml.DefaultLimits)
	flush := func() error {
		defer doc.Reset()
		if isBlankYAML(doc.Bytes()) {
			return nil
		}
		if err := limits.Check(doc.Bytes()); err != nil {
			return streamLimitError(err, chunkLine, docLine)
		}
		data, err := yaml.YAMLToJSONStrict(doc.Bytes())
		if err != nil {
			return &StreamError{Line: docLine, Err: absoluteYAMLError(doc.Bytes(), docLine)}
		}
		if bytes.Equal(data, []byte("null")) {
			return nil
		}
		return fn(data, docLine)
	}
	for {
		text, readErr := br.ReadString('\n')
		if text != "" {
			lineNo++
			trimmed := strings.TrimRight(text, "\r\n")
			if rest, ok := documentStart(trimmed); ok {
				if err := flush(); err != nil {
					return err
				}
				docLine, chunkLine = lineNo, lineNo
				if rest == "" {
					docLine = lineNo + 1
				}
				doc.WriteString(rest)
				doc.WriteByte('\n')
			} else {
				doc.WriteString(text)
			}
		}
		if errors.Is(readErr, io.EOF) {
			return flush()
		}
		if readErr != nil {
			return readErr
		}
	}
}

// streamLimitError places a limit refusal of a document in the file: the document's
// first line is chunkLine, its content starts at docLine.
func streamLimitError(err error, chunkLine, docLine int) error {
	var le *safeyaml.LimitError
	if !errors.As(err, &le) {
		return err
	}
	line := docLine
	if le.Line > 0 {
		line = chunkLine + le.Line - 1
	}
	return &StreamError{Line: line, Err: &safeyaml.LimitError{Msg: le.Msg}}
}

// documentStart reports whether a line is a "---" document marker, and returns what
// follows the marker on that line.
func documentStart(line string) (string, bool) {
	if line == "---" {
		return "", true
	}
	if strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "---\t") {
		return strings.TrimSpace(line[3:]), true
	}
	return "", false
}

func isBlankYAML(doc []byte) bool {
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("...")) {
			return false
		}
	}
	return true
}

// absoluteYAMLError parses a failing document again behind as many empty lines as precede
// it, so that the parser's "line N" is the line in the file. Only done on failure.
func absoluteYAMLError(doc []byte, docLine int) error {
	padded := append(bytes.Repeat([]byte("\n"), docLine-1), doc...)
	_, err := yaml.YAMLToJSONStrict(padded)
	if err == nil {
		return errors.New("document does not parse")
	}
	return err
}
