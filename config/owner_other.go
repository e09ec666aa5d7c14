//go:build !unix

package config

import "io/fs"

// exposure finds nothing where file modes and owners are not Unix's
// (Windows gives every file a made-up mode): ACLs are not read.
func exposure(string, fs.FileInfo) *UnsafeError { return nil }
