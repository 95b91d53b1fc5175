import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, for programs that need a port number up front (Prometheus,
 * Alertmanager, an SMTP server that comes up later). Servers of our own listen on port 0 instead.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
