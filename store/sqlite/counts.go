package sqlite

import "context"

// CountJobs counts every project's jobs by state in one query, without
// handing any job's blobs to the caller, for listings of projects.
func (s *Store) CountJobs(ctx context.Context) (map[string]map[string]int, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT project, state, count(*) FROM jobs GROUP BY project, state")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]map[string]int{}
	for rows.Next() {
		var project, state string
		var n int
		if err := rows.Scan(&project, &state, &n); err != nil {
			return nil, err
		}
		if counts[project] == nil {
			counts[project] = map[string]int{}
		}
		counts[project][state] = n
	}
	return counts, rows.Err()
}
