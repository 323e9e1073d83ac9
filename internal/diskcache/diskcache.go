// Package diskcache is the layout, key scheme and writer of fieldgo's disk
// caches, shared by the CPU and CUDA backends (and mirrored, name for name, by
// python/fieldgo/cache.py for the caches Python writes).
//
// One root, $FIELDGO_CACHE, else os.UserCacheDir()/fieldgo (~/.cache/fieldgo on
// Linux), holds one folder per kind:
//
//	source/<key>.c                  traced point sources (Python)
//	point/<key>.so, <key>.c         single-site libraries of Theory.at (Python)
//	cpu/<key>.so, <key>.so.sha256   CPU kernels (kernels/cpu)
//	cuda/<key>.cubin, <key>.log     CUDA modules and their ptxas logs (kernels/cuda)
//	cuda/<key>-<gpu>.tune.json      tuned tile shapes beside their CUBIN
//
// A key is the SHA-256 of the scheme's version, the kind and every input that
// determines the entry (source, compiler identity and version, options,
// architecture), so an entry written under another scheme is simply not found.
package diskcache

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Scheme names the key scheme; changing it orphans every existing entry (they
// are recompiled, never misread).
const Scheme = "fieldgo-cache/2"

// The kinds: one folder of the root each.
const (
	Source = "source"
	Point  = "point"
	CPU    = "cpu"
	CUDA   = "cuda"
)

// Kinds lists every kind, in the order reports show them.
var Kinds = []string{Source, Point, CPU, CUDA}

// Root is the cache root: $FIELDGO_CACHE, else the platform's cache directory
// (os.UserCacheDir) + "/fieldgo".
func Root() (string, error) {
	if d := os.Getenv("FIELDGO_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "fieldgo"), nil
}

// Dir is the folder of one kind under Root.
func Dir(kind string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, kind), nil
}

// Key hashes the scheme, the kind and parts (each NUL-terminated) into 64 hex
// digits. python/fieldgo/cache.py's key gives the same digits for the same
// arguments.
func Key(kind string, parts ...string) string {
	h := sha256.New()
	for _, s := range append([]string{Scheme, kind}, parts...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WriteAtomic writes data to path so that no reader, in this process or
// another, ever sees part of it: a temporary file in path's folder (which
// must exist), written, synced, then renamed over path. On error nothing is
// left behind.
func WriteAtomic(path string, data []byte) error {
	return WriteAtomicWith(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteAtomicWith is WriteAtomic for a writer that streams into the file.
func WriteAtomicWith(path string, write func(f *os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
