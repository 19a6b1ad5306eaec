package cloudtasks

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
)

// Destination says where Cloud Tasks delivers the tasks: AppEngine on App
// Engine, HTTP on Cloud Run (or anywhere else reachable over HTTPS).
type Destination interface {
	// request sets t's payload to a POST of body.
	request(t *cloudtaskspb.Task, body []byte)
	check() error
}

// AppEngine delivers tasks as App Engine HTTP requests to Path of the app's
// Service (empty: the default service), which only Cloud Tasks can reach
// with the X-AppEngine-QueueName header set (see AppEngineQueue).
type AppEngine struct {
	Service string
	Path    string // the task endpoint, e.g. "/internal/tasks"
}

// HTTP delivers tasks as HTTP requests to URL, each with an OIDC token that
// Google signs for ServiceAccount with Audience (default: URL), which the
// endpoint verifies (see OIDC). The account creating tasks needs
// iam.serviceAccounts.actAs on ServiceAccount.
type HTTP struct {
	URL            string
	ServiceAccount string
	Audience       string
}

var jsonHeaders = map[string]string{"Content-Type": "application/json"}

func (a AppEngine) request(t *cloudtaskspb.Task, body []byte) {
	req := &cloudtaskspb.AppEngineHttpRequest{
		HttpMethod:  cloudtaskspb.HttpMethod_POST,
		RelativeUri: a.Path,
		Headers:     jsonHeaders,
		Body:        body,
	}
	if a.Service != "" {
		req.AppEngineRouting = &cloudtaskspb.AppEngineRouting{Service: a.Service}
	}
	t.MessageType = &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: req}
}

func (a AppEngine) check() error {
	if !strings.HasPrefix(a.Path, "/") {
		return fmt.Errorf("App Engine target: path %q: want a path starting with /", a.Path)
	}
	return nil
}

func (h HTTP) request(t *cloudtaskspb.Task, body []byte) {
	t.MessageType = &cloudtaskspb.Task_HttpRequest{HttpRequest: &cloudtaskspb.HttpRequest{
		Url:        h.URL,
		HttpMethod: cloudtaskspb.HttpMethod_POST,
		Headers:    jsonHeaders,
		Body:       body,
		AuthorizationHeader: &cloudtaskspb.HttpRequest_OidcToken{OidcToken: &cloudtaskspb.OidcToken{
			ServiceAccountEmail: h.ServiceAccount,
			Audience:            h.audience(),
		}},
	}}
}

func (h HTTP) audience() string {
	if h.Audience != "" {
		return h.Audience
	}
	return h.URL
}

func (h HTTP) check() error {
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("HTTP target: url %q: want an absolute http(s) URL", h.URL)
	}
	if !strings.Contains(h.ServiceAccount, "@") {
		return fmt.Errorf("HTTP target: service account %q: want the account's email", h.ServiceAccount)
	}
	return nil
}

var errNoTarget = errors.New("target: missing (AppEngine or HTTP)")
