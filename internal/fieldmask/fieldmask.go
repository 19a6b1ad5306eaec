// Package fieldmask applies an update mask the way Google's APIs do: each
// path names a field of the resource, nested ones joined by dots
// ("rate_limits.max_dispatches_per_second"), and only those fields are
// copied from the request onto the stored resource. The in-test servers of
// Cloud Tasks and Cloud Scheduler use it to honour update_mask.
package fieldmask

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Apply copies the fields paths name from src onto dst, which must be
// messages of one type; a field unset in src is cleared in dst. An unknown
// path is an error naming it, and then dst is unchanged.
func Apply(dst, src proto.Message, paths []string) error {
	if dst.ProtoReflect().Descriptor() != src.ProtoReflect().Descriptor() {
		return fmt.Errorf("fieldmask: %s onto %s", src.ProtoReflect().Descriptor().FullName(), dst.ProtoReflect().Descriptor().FullName())
	}
	resolved := make([][]protoreflect.FieldDescriptor, len(paths))
	for i, p := range paths {
		fds, err := resolve(dst.ProtoReflect().Descriptor(), p)
		if err != nil {
			return err
		}
		resolved[i] = fds
	}
	// A private copy, so dst never shares a list or message with the caller's src.
	from := proto.Clone(src).ProtoReflect()
	for _, fds := range resolved {
		copyPath(dst.ProtoReflect(), from, fds)
	}
	return nil
}

// resolve turns a path into the fields it walks through: every one but the
// last a singular message field.
func resolve(md protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	var fds []protoreflect.FieldDescriptor
	for i, name := range strings.Split(path, ".") {
		if i > 0 {
			prev := fds[i-1]
			if prev.Kind() != protoreflect.MessageKind || prev.IsList() || prev.IsMap() {
				return nil, fmt.Errorf("update mask path %q: %s is not a message", path, prev.Name())
			}
			md = prev.Message()
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return nil, fmt.Errorf("update mask path %q: %s has no field %q", path, md.FullName(), name)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

func copyPath(dst, src protoreflect.Message, fds []protoreflect.FieldDescriptor) {
	fd := fds[0]
	if len(fds) > 1 {
		copyPath(dst.Mutable(fd).Message(), src.Get(fd).Message(), fds[1:])
		return
	}
	if src.Has(fd) {
		dst.Set(fd, src.Get(fd))
	} else {
		dst.Clear(fd)
	}
}
