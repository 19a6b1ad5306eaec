// Package standin reaches local stand-ins of Google APIs: the Datastore
// emulator, the in-test Cloud Tasks and Cloud Scheduler servers.
package standin

import (
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ClientOptions are the client options for an API's stand-in at endpoint
// (host:port): plain text, no credentials. They are none for an empty
// endpoint, so the client goes to Google with the ambient credentials.
func ClientOptions(endpoint string) []option.ClientOption {
	if endpoint == "" {
		return nil
	}
	return []option.ClientOption{
		option.WithEndpoint(endpoint),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}
