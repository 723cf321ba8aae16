package rest

import (
	"fmt"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	pbconv03 "github.com/a2aproject/a2a-go/v2/a2apb/v0/pbconv"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/protobuf/encoding/protojson"
)

// v03Card rewrites the canonical 1.0 extended card the core answers GET
// /v1/card with into the 0.3 proto's AgentCard ProtoJSON (its security
// schemes as oneofs, security as {"schemes":{name:{"list":[…]}}}), through
// the official SDK's generated types and conversions rather than by hand.
// The gateway serves 0.3 at the URL of every binding it serves 1.0 at, so
// a card that lists only 1.0 interfaces lists each again at 0.3, as the
// 0.3 card's url, preferredTransport and additionalInterfaces need.
func v03Card(canon []byte) ([]byte, error) {
	var card10 a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(canon, &card10); err != nil {
		return nil, fmt.Errorf("the extended card is not a 1.0 AgentCard: %w", err)
	}
	card, err := pbconv.FromProtoAgentCard(&card10)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(card.SupportedInterfaces, func(i *a2a.AgentInterface) bool { return i.ProtocolVersion == a2av0.Version }) {
		for _, i := range slices.Clone(card.SupportedInterfaces) {
			twin := *i
			twin.ProtocolVersion = a2av0.Version
			card.SupportedInterfaces = append(card.SupportedInterfaces, &twin)
		}
	}
	card03, err := pbconv03.ToProtoAgentCard(card)
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(card03)
}
