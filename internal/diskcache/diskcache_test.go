package diskcache_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/internal/diskcache"
)

// The same digits as python/fieldgo/cache.py's key (tests/python/test_cache.py
// holds this vector too).
func TestKeyIsTheSharedScheme(t *testing.T) {
	got := diskcache.Key("cpu", "int main(void){return 0;}", "cc", "-O3")
	const want = "c6941e09cf4f3fbd927f0b1ab3e30592e731a52ba9227c84cf65d601a3fb3a1a"
	if got != want {
		t.Fatalf("Key = %s, want %s", got, want)
	}
	if diskcache.Key("cuda", "int main(void){return 0;}", "cc", "-O3") == got {
		t.Fatal("the kind must be part of the key")
	}
	if diskcache.Key("cpu", "a", "bc") == diskcache.Key("cpu", "ab", "c") {
		t.Fatal("parts must be delimited")
	}
}

func TestRootAndDir(t *testing.T) {
	t.Setenv("FIELDGO_CACHE", "/some/root")
	root, err := diskcache.Root()
	if err != nil || root != "/some/root" {
		t.Fatalf("Root = %q, %v", root, err)
	}
	d, err := diskcache.Dir(diskcache.CUDA)
	if err != nil || d != filepath.Join("/some/root", "cuda") {
		t.Fatalf("Dir = %q, %v", d, err)
	}
	t.Setenv("FIELDGO_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if root, _ := diskcache.Root(); !strings.HasSuffix(root, "fieldgo") {
		t.Fatalf("Root without FIELDGO_CACHE = %q", root)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry.bin")
	for _, data := range []string{"first", "second, longer"} {
		if err := diskcache.WriteAtomic(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	names, _ := os.ReadDir(filepath.Dir(path))
	if len(names) != 1 {
		t.Fatalf("temporaries left: %v", names)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
}

func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry")
	if err := diskcache.WriteAtomic(path, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := diskcache.WriteAtomicWith(path, func(f *os.File) error {
		f.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	got, _ := os.ReadFile(path)
	names, _ := os.ReadDir(dir)
	if string(got) != "whole" || len(names) != 1 {
		t.Fatalf("after a failed write: %q, %v", got, names)
	}
	// A missing folder is an error (callers make theirs), not a panic.
	if err := diskcache.WriteAtomic(filepath.Join(dir, "missing", "entry"), nil); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}
