package config

import (
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// errReadOnly is what writing to a fetched pack gets.
var errReadOnly = errors.New("a fetched pack is read only")

// packObjects are the objects of one fetched pack, as go-git's object
// package reads them: each inflated when it is asked for, and its size
// known before.
type packObjects struct {
	pack *packfile.Packfile
}

var _ storer.EncodedObjectStorer = (*packObjects)(nil)

func (p *packObjects) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (p *packObjects) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

func (p *packObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := p.pack.Get(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && o.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return o, nil
}

func (p *packObjects) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return p.pack.GetByType(t)
}

func (p *packObjects) HasEncodedObject(h plumbing.Hash) error {
	_, err := p.pack.FindOffset(h)
	return err
}

// EncodedObjectSize is an object's size, read from its header (and a
// delta's first bytes), not from the object inflated.
func (p *packObjects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	offset, err := p.pack.FindOffset(h)
	if err != nil {
		return 0, err
	}
	return p.pack.GetSizeByOffset(offset)
}

func (p *packObjects) AddAlternate(string) error { return errReadOnly }

// packFile is a pack in memory as the file go-git's Packfile reads.
type packFile struct{ *io.SectionReader }

func (packFile) Name() string              { return "fetched.pack" }
func (packFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (packFile) Close() error              { return nil }
func (packFile) Lock() error               { return nil }
func (packFile) Unlock() error             { return nil }
func (packFile) Truncate(int64) error      { return errReadOnly }
