package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// scratch is the copy of the tree the mutations are applied to. One fixed
// path for every mutation (and every run) keeps Go's build cache warm:
// compiled packages are keyed by their directory as well as their content.
// A copy, not go test -overlay, because the drills build the hookinbox
// binary in a subprocess of their own, which an overlay would not reach.
type scratch struct {
	dir  string
	lock *os.File
}

// skipped are tracked files no test reads, left out of the copy.
func skipped(path string) bool {
	return strings.HasPrefix(path, "bench/results/") ||
		(strings.HasPrefix(path, "docs/") && strings.HasSuffix(path, ".png"))
}

// newScratch copies the tree at root into dir, replacing what a previous
// run left there. It holds a lock on dir so that two runs never mutate one
// copy.
func newScratch(root, dir string) (*scratch, error) {
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("scratch dir %s is inside the tree %s", dir, root)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &scratch{dir: dir, lock: lock}
	files, err := treeFiles(root)
	if err == nil {
		err = s.fill(root, files)
	}
	if err != nil {
		s.close(false)
		return nil, err
	}
	return s, nil
}

// newScratches makes n copies of the tree: dir, then dir-2, dir-3, …
func newScratches(root, dir string, n int) ([]*scratch, error) {
	copies := make([]*scratch, 0, max(n, 1))
	for i := range max(n, 1) {
		d := dir
		if i > 0 {
			d = fmt.Sprintf("%s-%d", dir, i+1)
		}
		s, err := newScratch(root, d)
		if err != nil {
			for _, c := range copies {
				c.close(false)
			}
			return nil, err
		}
		copies = append(copies, s)
	}
	return copies, nil
}

// lockDir takes an exclusive lock next to dir; the kernel drops it when
// the process ends, however it ends.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("scratch dir %s is in use by another run: %w", dir, err)
	}
	return f, nil
}

// treeFiles lists what the working tree builds from: the tracked files and
// the untracked ones git does not ignore, so that a file added but not
// yet committed is copied with the files that use it.
func treeFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if p := string(f); p != "" && !skipped(p) {
			files = append(files, p)
		}
	}
	return files, nil
}

func (s *scratch) fill(root string, files []string) error {
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	for _, f := range files {
		err := copyFile(filepath.Join(root, f), filepath.Join(s.dir, f))
		if os.IsNotExist(err) {
			continue // tracked but deleted in the working tree
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil || st.IsDir() { // a submodule's directory
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// mutate applies m to the copy and returns the function that restores
// the file.
func (s *scratch) mutate(m Mutation) (restore func() error, err error) {
	return s.edit(m.File, m.apply)
}

// edit changes one file of the copy and returns the function that
// restores it.
func (s *scratch) edit(file string, change func(string) (string, error)) (restore func() error, err error) {
	path := filepath.Join(s.dir, file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mutated, err := change(string(orig))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		return nil, err
	}
	return func() error { return os.WriteFile(path, orig, 0o644) }, nil
}

// close releases the copy, and removes it unless keep.
func (s *scratch) close(keep bool) error {
	var err error
	if !keep {
		err = os.RemoveAll(s.dir)
	}
	s.lock.Close()
	return err
}
