package datastore

import (
	"context"
	"fmt"
	"sync/atomic"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
)

// Counter counts what a Datastore client asks of the service, as billed:
// commits, entity reads and entity writes. Install it with ClientOption
// when creating the client.
type Counter struct {
	calls, commits, reads, lookups, writes atomic.Int64
}

// Cost is what a Counter counted.
type Cost struct {
	Calls   int64 // RPCs of any kind, failed ones included
	Commits int64 // successful commits
	// Reads counts entities looked up (found or missing: a lookup of a
	// missing entity is billed too) and query results (a keys-only
	// result is an index entry, counted as one).
	Reads int64
	// Lookups are the Reads that are entities looked up by key, not
	// query results: a keys-only result is far cheaper than a lookup
	// under Datastore's pricing, so a cost is told by both.
	Lookups int64
	Writes  int64 // mutations in successful commits
}

func (c Cost) String() string {
	return fmt.Sprintf("commits=%d reads=%d (lookups=%d) writes=%d calls=%d", c.Commits, c.Reads, c.Lookups, c.Writes, c.Calls)
}

// Sub returns what was counted between an earlier reading and c.
func (c Cost) Sub(earlier Cost) Cost {
	return Cost{c.Calls - earlier.Calls, c.Commits - earlier.Commits, c.Reads - earlier.Reads, c.Lookups - earlier.Lookups, c.Writes - earlier.Writes}
}

// Cost returns what was counted so far.
func (c *Counter) Cost() Cost {
	return Cost{Calls: c.calls.Load(), Commits: c.commits.Load(), Reads: c.reads.Load(), Lookups: c.lookups.Load(), Writes: c.writes.Load()}
}

// ClientOption installs the counter as a gRPC interceptor of the client.
func (c *Counter) ClientOption() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(c.intercept))
}

func (c *Counter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	c.calls.Add(1)
	if err != nil {
		return err
	}
	switch r := reply.(type) {
	case *pb.CommitResponse:
		c.commits.Add(1)
		if q, ok := req.(*pb.CommitRequest); ok {
			c.writes.Add(int64(len(q.GetMutations())))
		}
	case *pb.LookupResponse:
		n := int64(len(r.GetFound()) + len(r.GetMissing()))
		c.reads.Add(n)
		c.lookups.Add(n)
	case *pb.RunQueryResponse:
		c.reads.Add(int64(len(r.GetBatch().GetEntityResults())))
	}
	return nil
}
