package swarming

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The messages of the Swarming v2 API (swarming.v2 in luci-go's
// swarming/proto/api_v2/swarming.proto) that the target uses, as pRPC's
// JSON encoding writes them: lowerCamelCase names, enums by name, int64 in
// strings.

type stringPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type digest struct {
	Hash      string `json:"hash"`
	SizeBytes string `json:"sizeBytes"`
}

type casReference struct {
	Instance string `json:"casInstance"`
	Digest   digest `json:"digest"`
}

type cipdPackage struct {
	Name    string `json:"packageName"`
	Version string `json:"version"`
	Path    string `json:"path,omitempty"`
}

type cipdInput struct {
	Packages []cipdPackage `json:"packages"`
}

type taskProperties struct {
	CIPDInput            *cipdInput    `json:"cipdInput,omitempty"`
	Command              []string      `json:"command"`
	RelativeCwd          string        `json:"relativeCwd,omitempty"`
	Dimensions           []stringPair  `json:"dimensions"`
	Env                  []stringPair  `json:"env,omitempty"`
	ExecutionTimeoutSecs int           `json:"executionTimeoutSecs"`
	GracePeriodSecs      int           `json:"gracePeriodSecs"`
	CASInputRoot         *casReference `json:"casInputRoot,omitempty"`
}

type taskSlice struct {
	Properties     taskProperties `json:"properties"`
	ExpirationSecs int            `json:"expirationSecs"`
}

// taskRequest is swarming.v2.NewTaskRequest.
type taskRequest struct {
	Name            string      `json:"name"`
	Priority        int         `json:"priority"`
	TaskSlices      []taskSlice `json:"taskSlices"`
	Tags            []string    `json:"tags"`
	User            string      `json:"user,omitempty"`
	ServiceAccount  string      `json:"serviceAccount,omitempty"`
	PubSubTopic     string      `json:"pubsubTopic,omitempty"`
	PubSubAuthToken string      `json:"pubsubAuthToken,omitempty"`
	PubSubUserdata  string      `json:"pubsubUserdata,omitempty"`
	RequestUUID     string      `json:"requestUuid"`
	Realm           string      `json:"realm,omitempty"`
}

// taskResult is the part of swarming.v2.TaskResultResponse the target
// reads.
type taskResult struct {
	TaskID   string   `json:"taskId"`
	State    string   `json:"state"`
	ExitCode string   `json:"exitCode,omitempty"`
	Failure  bool     `json:"failure,omitempty"`
	BotID    string   `json:"botId,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

type newTaskResponse struct {
	TaskID string      `json:"taskId"`
	Result *taskResult `json:"taskResult,omitempty"`
}

type taskListRequest struct {
	Limit int      `json:"limit"`
	Start string   `json:"start,omitempty"`
	State string   `json:"state"`
	Tags  []string `json:"tags"`
}

type taskListResponse struct {
	Items []taskResult `json:"items"`
}

type cancelRequest struct {
	TaskID      string `json:"taskId"`
	KillRunning bool   `json:"killRunning"`
}

type cancelResponse struct {
	Canceled   bool `json:"canceled"`
	WasRunning bool `json:"wasRunning"`
}

// prpcPrefix starts every pRPC JSON response, so that a browser cannot run
// one as a script.
const prpcPrefix = ")]}'\n"

// rpcError is an error the server answered: its gRPC code and message.
type rpcError struct {
	code int // a google.golang.org/grpc/codes value
	msg  string
}

func (e *rpcError) Error() string { return fmt.Sprintf("code %d: %s", e.code, e.msg) }

// gRPC codes the target tells apart.
const (
	codeNotFound         = 5
	codePermissionDenied = 7
	codeInvalidArgument  = 3
	codeUnauthenticated  = 16
)

// permanent reports whether err is the server refusing the request itself,
// which sending it again would not change.
func permanent(err error) bool {
	var re *rpcError
	if !errors.As(err, &re) {
		return false
	}
	switch re.code {
	case codeInvalidArgument, codePermissionDenied, codeUnauthenticated, codeNotFound:
		return true
	}
	return false
}

// call makes one pRPC call of the swarming.v2.Tasks service.
func call(ctx context.Context, c *http.Client, server, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := strings.TrimSuffix(server, "/") + "/prpc/swarming.v2.Tasks/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if code := resp.Header.Get("X-Prpc-Grpc-Code"); code != "" && code != "0" || resp.StatusCode != http.StatusOK {
		n, convErr := strconv.Atoi(code)
		if convErr != nil {
			n = 2 // Unknown: no pRPC server answered (a proxy, a load balancer)
		}
		return &rpcError{code: n, msg: fmt.Sprintf("%s: HTTP %d: %s", method, resp.StatusCode, strings.TrimSpace(string(b)))}
	}
	rest, ok := bytes.CutPrefix(b, []byte(prpcPrefix))
	if !ok {
		return fmt.Errorf("%s: the answer does not start with pRPC's %q prefix", method, strings.TrimSpace(prpcPrefix))
	}
	if err := json.Unmarshal(rest, out); err != nil {
		return fmt.Errorf("%s: decoding the answer: %v", method, err)
	}
	return nil
}
