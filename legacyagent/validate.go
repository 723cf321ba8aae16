package legacyagent

import (
	"errors"
	"fmt"

	"github.com/a2agate/gateway/internal/agentcore"
)

// validateUserMessage checks msg against the 0.2.5 schema's required fields
// and the one role a client may send.
func validateUserMessage(msg *message) error {
	if msg == nil {
		return errors.New("message: required")
	}
	if msg.Kind != kindMessage {
		return fmt.Errorf("message.kind: must be %q, got %q", kindMessage, msg.Kind)
	}
	if err := agentcore.CheckUserMessage(msg.MessageID, msg.Role, roleUser, len(msg.Parts)); err != nil {
		return err
	}
	for i, p := range msg.Parts {
		if err := validatePart(p); err != nil {
			return fmt.Errorf("message.parts[%d].%w", i, err)
		}
	}
	return nil
}

func validatePart(p part) error {
	switch p.Kind {
	case kindText:
		if p.Text == nil {
			return errors.New("text: required")
		}
	case kindFile:
		if p.File == nil {
			return errors.New("file: required")
		}
		if (p.File.Bytes == nil) == (p.File.URI == nil) {
			return errors.New("file: exactly one of bytes and uri is required")
		}
	case kindData:
		if p.Data == nil {
			return errors.New("data: required")
		}
	default:
		return fmt.Errorf("kind: must be %q, %q or %q, got %q", kindText, kindFile, kindData, p.Kind)
	}
	return nil
}

func validatePushConfig(c *pushConfig) error {
	if c == nil {
		return errors.New("pushNotificationConfig: required")
	}
	if err := agentcore.CheckWebhookURL("pushNotificationConfig.url", c.URL); err != nil {
		return err
	}
	if c.Authentication != nil && len(c.Authentication.Schemes) == 0 {
		return errors.New("pushNotificationConfig.authentication.schemes: must not be empty")
	}
	return nil
}
