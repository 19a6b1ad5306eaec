package sqlite

import "context"

// ForgetOwner deletes owner's heartbeat row: its claims are free at once,
// as they would be once its heartbeat grew old. For an owner known dead.
func (s *Store) ForgetOwner(ctx context.Context, owner string) error {
	return s.write(ctx, false, nil, func(w *writer) error {
		_, err := w.exec("DELETE FROM owners WHERE owner = ?", owner)
		return err
	})
}
