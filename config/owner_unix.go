//go:build unix

package config

import (
	"io/fs"
	"os"
	"syscall"
)

// exposure says whether users other than the one running cpactl (and
// root) could change the file fi: it is writable by its group or by
// others, or another user owns it. ssh refuses such a config file.
func exposure(path string, fi fs.FileInfo) *UnsafeError {
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeError{Path: path, Mode: perm, Owner: -1}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
		return &UnsafeError{Path: path, Mode: fi.Mode().Perm(), Owner: int(st.Uid), User: uid}
	}
	return nil
}
