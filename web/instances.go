package web

import (
	"net/http"
	"time"
)

// Instance is one server of a shape of many instances on one database,
// as GET /api/v1/instances lists it.
type Instance struct {
	ID      string    `json:"id"` // its name in the task rows' claims
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Seen is when it last said it was alive; Alive, whether that is
	// recent enough for it to be running.
	Seen  time.Time `json:"seen"`
	Alive bool      `json:"alive"`
	// Self marks the instance that answered.
	Self bool `json:"self"`
	// SettingsDiffer names the groups of settings every instance must be
	// given alike in which this one differs from the one that answered.
	SettingsDiffer []string `json:"settings_differ"`
}

// listInstances answers GET /api/v1/instances.
func (s *server) listInstances(r *http.Request) (int, any, error) {
	if s.instancesFn == nil {
		return 0, nil, notFound("this server's shape keeps no list of instances: it is one process, or its platform runs them (the cloud shape)")
	}
	list, err := s.instancesFn(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, struct {
		Instances []Instance `json:"instances"`
	}{list}, nil
}
