package brokertest

import (
	"errors"
	"os"
	"path/filepath"
)

// ModuleRoot is the nearest folder above the working directory (a test's
// package) that holds go.mod: the repository root.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}
