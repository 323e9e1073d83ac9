package hostmem

import "testing"

// TestClearParallel: every byte is zero afterwards, whatever the length
// (empty, below one chunk, several chunks with a ragged end).
func TestClearParallel(t *testing.T) {
	for _, n := range []int{0, 1, 4<<20 - 1, 9<<20 + 3, 37<<20 + 11} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i%251 + 1)
		}
		ClearParallel(b, 0)
		for i, v := range b {
			if v != 0 {
				t.Fatalf("length %d: byte %d is %d after ClearParallel", n, i, v)
			}
		}
	}
}
