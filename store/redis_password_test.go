package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testredis"
)

// TestRedisPasswordFileRotated: a password_file rewritten with a new
// password (a rotated Secret) is used by the connections made after it,
// so that revoking the old password does not cut the gateway off its
// index until a restart.
func TestRedisPasswordFileRotated(t *testing.T) {
	addr := testredis.Addr(t)
	admin := adminClient(t)
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	user := "a2agw-rotation-" + hex.EncodeToString(b)
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">first-password", "~*", "&*", "+@all").Err(); err != nil {
		t.Skipf("this Redis has no ACL users: %v", err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	file := filepath.Join(t.TempDir(), "redis-password")
	write := func(p string) {
		if err := os.WriteFile(file+".new", []byte(p+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".new", file); err != nil {
			t.Fatal(err)
		}
	}
	write("first-password")
	s := openRedisStore(t, RedisConfig{Address: addr, Username: user, PasswordFile: file, KeyPrefix: testPrefix(t)})
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("with the first password: %v", err)
	}

	if err := admin.Do(ctx, "ACL", "SETUSER", user, "resetpass", ">second-password").Err(); err != nil {
		t.Fatal(err)
	}
	write("second-password")
	if err := admin.Do(ctx, "CLIENT", "KILL", "USER", user).Err(); err != nil {
		t.Fatal(err)
	}
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // polling, not synchronising
		if err = s.Ping(ctx); err == nil {
			return
		}
	}
	t.Fatalf("after the password file was rotated and the old connections closed: %v", err)
}
