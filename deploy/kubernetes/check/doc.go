// Package check tests deploy/kubernetes's manifests where no cluster and
// no current kubectl are: each object is decoded strictly into its
// Kubernetes type (a field the API does not know fails), what the objects
// say of one another and of Sundial is checked (probes, selectors, the
// Secret's keys, the lockdown, the flags `sundial serve -h` knows), and
// the Deployment's container is run as a process on a private PostgreSQL,
// its probes asked. It is a module of its own, so that Sundial's go.mod
// never depends on Kubernetes.
package check
