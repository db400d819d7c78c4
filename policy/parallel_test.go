package policy

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestEachInput: every input is evaluated once, and when several fail the error is the
// first one's in order, however the goroutines were scheduled.
func TestEachInput(t *testing.T) {
	for _, n := range []int{0, 1, 7, 300} {
		runs := make([]atomic.Int32, n)
		if err := eachInput(n, func(i int) error { runs[i].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range runs {
			if got := runs[i].Load(); got != 1 {
				t.Errorf("n=%d: input %d evaluated %d times", n, i, got)
			}
		}
	}
	for range 50 {
		err := eachInput(300, func(i int) error {
			if i == 40 || i == 41 || i == 299 {
				return fmt.Errorf("input %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "input 40" {
			t.Fatalf("got %v, want the error of input 40", err)
		}
	}
	if err := eachInput(3, func(i int) error { return errors.ErrUnsupported }); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("got %v", err)
	}
}
