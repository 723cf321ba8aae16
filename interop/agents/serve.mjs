// Process plumbing shared by the backend agents: port selection, the
// readiness line the runner waits for, and orderly shutdown.

import { parseArgs } from 'node:util';

export function backendArgs() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  return { port: Number(values.port), host: values.host };
}

// listen starts app and resolves with its base URL (trailing slash). It
// prints one JSON line with "msg":"listening" on stdout, the same readiness
// signal the gateway logs, so run.sh waits for every process the same way.
export function listen(app, { host, port }, onAddress) {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const { address, port: boundPort } = server.address();
      const url = `http://${address}:${boundPort}/`;
      onAddress(url);
      process.stdout.write(
        `${JSON.stringify({ msg: 'listening', addr: `${address}:${boundPort}`, url })}\n`,
      );
      resolve({ server, url });
    });
    const stop = () => {
      server.closeAllConnections?.();
      server.close(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

// waitUntil polls check on the event loop until it returns true; it is
// used where an SDK updates its task store asynchronously after an event
// and the agent must not answer before the store caught up.
export async function waitUntil(check, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error('condition not reached before deadline');
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}
