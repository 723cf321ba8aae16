package agent10

import (
	"errors"
	"fmt"

	"github.com/a2agate/gateway/internal/agentcore"
)

// validateUserMessage checks msg against the proto's REQUIRED fields, the
// "content" oneof of each part, and the one role a client may send.
func validateUserMessage(msg *message) error {
	if msg == nil {
		return errors.New("message: required")
	}
	if err := agentcore.CheckUserMessage(msg.MessageID, msg.Role, roleUser, len(msg.Parts)); err != nil {
		return err
	}
	for i, p := range msg.Parts {
		if n := contentCount(p); n != 1 {
			return fmt.Errorf("message.parts[%d]: must set exactly one of text, raw, url and data, got %d", i, n)
		}
	}
	return nil
}

func contentCount(p part) int {
	n := 0
	for _, set := range []bool{p.Text != nil, p.Raw != nil, p.URL != nil, p.Data != nil} {
		if set {
			n++
		}
	}
	return n
}

// validatePushConfig checks a TaskPushNotificationConfig; field is its
// path in the request, for the error message.
func validatePushConfig(c *pushConfig, field string) error {
	if c == nil {
		return fmt.Errorf("%s: required", field)
	}
	if err := agentcore.CheckWebhookURL(field+".url", c.URL); err != nil {
		return err
	}
	if c.Authentication != nil && c.Authentication.Scheme == "" {
		return fmt.Errorf("%s.authentication.scheme: required", field)
	}
	return nil
}
