package proxy

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/auth"
)

// TestGRPCAuthenticatesBeforeDecoding: a gRPC caller without a valid
// token whose request message the binding cannot take (no valid protobuf,
// a field its proto does not define, too large in the JSON form the
// gateway forwards, a 0.3 request the SDK cannot convert) gets, status and
// headers byte for byte, what the same call with a well-formed message
// gets: UNAUTHENTICATED with its challenge, or UNAVAILABLE while the
// gateway cannot check tokens; not INVALID_ARGUMENT about its message. For
// both services, unary and server-streaming, on both transports. Before,
// it was told what was wrong with its message.
func TestGRPCAuthenticatesBeforeDecoding(t *testing.T) {
	const limit = 4096
	small := func(a *AgentConfig) { a.MaxBodyBytes = limit }
	hmac := newAuthGateway(t, backends[0], small)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	keysDown := newGateway(t, backends[0].handler(t, nil), backends[0].version, small, func(a *AgentConfig) {
		a.Auth = &auth.Config{Issuer: testIssuer, Algorithms: []string{"ES256"}, JWKSURL: down.URL, JWKSMinRefetch: time.Nanosecond}
	})
	es256 := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": testIssuer, "sub": "alice", "aud": "http://gateway.test/", "exp": time.Now().Add(time.Hour).Unix()})
	es256.Header["kid"] = "k1"
	signed, err := es256.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}

	wire := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unknownField := func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(bytes.Clone(b), 999, protowire.VarintType), 1)
	}
	cut := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 200)
	get := wire(&a2apb.GetTaskRequest{Id: "t1"})
	send := wire(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
	// Within the limit as protobuf, over it as the JSON (base64) forwarded.
	large := wire(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Raw{Raw: bytes.Repeat([]byte{7}, limit*7/8)}}}}})
	subscribe := wire(&a2apb.SubscribeToTaskRequest{Id: "t1"})
	get03 := wire(&pb03.GetTaskRequest{Name: "tasks/t1"})
	send03 := wire(&pb03.SendMessageRequest{Request: &pb03.Message{MessageId: "m1", Role: pb03.Role_ROLE_USER,
		Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}})
	const v10, v03 = "/lf.a2a.v1.A2AService/", "/a2a.v1.A2AService/"
	cases := []struct {
		name, method    string
		stream          bool
		bad, wellFormed []byte
	}{
		{"1.0 GetTask cut short", v10 + "GetTask", false, cut, get},
		{"1.0 GetTask unknown field", v10 + "GetTask", false, unknownField(get), get},
		{"1.0 SendMessage field number 0", v10 + "SendMessage", false, []byte{0x00, 0x01}, send},
		{"1.0 SendMessage over the limit as JSON", v10 + "SendMessage", false, large, send},
		{"1.0 SendStreamingMessage cut short", v10 + "SendStreamingMessage", true, cut, send},
		{"1.0 SubscribeToTask unknown field", v10 + "SubscribeToTask", true, unknownField(subscribe), subscribe},
		{"0.3 GetTask cut short", v03 + "GetTask", false, cut, get03},
		{"0.3 GetTask name the SDK cannot convert", v03 + "GetTask", false, wire(&pb03.GetTaskRequest{Name: "t1"}), get03},
		{"0.3 SendMessage unknown field", v03 + "SendMessage", false, unknownField(send03), send03},
		{"0.3 SendStreamingMessage cut short", v03 + "SendStreamingMessage", true, cut, send03},
	}
	callers := []struct {
		name          string
		g             *testGateway
		authorization string
		code          codes.Code
	}{
		{"no token", hmac, "", codes.Unauthenticated},
		{"invalid token", hmac, "Bearer not.a.jwt", codes.Unauthenticated},
		{"keys unavailable", keysDown, "Bearer " + signed, codes.Unavailable},
	}
	for _, tr := range grpcTransports {
		conns := map[*testGateway]*grpc.ClientConn{hmac: tr.serve(t, hmac).conn, keysDown: tr.serve(t, keysDown).conn}
		for _, c := range callers {
			for _, tc := range cases {
				t.Run(tr.name+"/"+c.name+"/"+tc.name, func(t *testing.T) {
					ctx := context.Background()
					if c.authorization != "" {
						ctx = metadata.AppendToOutgoingContext(ctx, "authorization", c.authorization)
					}
					conn := conns[c.g]
					wantErr, wantMD := invokeWire(ctx, conn, tc.method, tc.stream, tc.wellFormed)
					want := status.Convert(wantErr)
					if want.Code() != c.code {
						t.Fatalf("the well-formed call: %v, want %s", wantErr, c.code)
					}
					gotErr, gotMD := invokeWire(ctx, conn, tc.method, tc.stream, tc.bad)
					got := status.Convert(gotErr)
					if !proto.Equal(got.Proto(), want.Proto()) {
						t.Errorf("got %v\nwant %v", got.Proto(), want.Proto())
					}
					for _, k := range []string{"www-authenticate", "retry-after"} {
						if g, w := strings.Join(gotMD.Get(k), ", "), strings.Join(wantMD.Get(k), ", "); g != w {
							t.Errorf("%s %q, want %q", k, g, w)
						}
					}
				})
			}
		}
		// An authenticated caller still learns what is wrong with its
		// message.
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token(t, "alice"))
		err, _ := invokeWire(ctx, conns[hmac], v10+"GetTask", false, cut)
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "not a valid protobuf") {
			t.Errorf("%s: an authenticated caller's malformed message: %v", tr.name, err)
		}
	}
}

// invokeWire calls method with body as the request message's bytes, and
// reads the whole answer: its error and its header metadata.
func invokeWire(ctx context.Context, conn *grpc.ClientConn, method string, stream bool, body []byte) (error, metadata.MD) {
	msg := rawMessage(body)
	var md metadata.MD
	if !stream {
		var out rawMessage
		return conn.Invoke(ctx, method, &msg, &out, grpc.ForceCodec(rawCodec{}), grpc.Header(&md)), md
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err, nil
	}
	if err := s.SendMsg(&msg); err != nil && err != io.EOF {
		return err, nil
	}
	if err := s.CloseSend(); err != nil {
		return err, nil
	}
	for {
		var out rawMessage
		if err := s.RecvMsg(&out); err != nil {
			md, _ = s.Header()
			if err == io.EOF {
				err = nil
			}
			return err, md
		}
	}
}
