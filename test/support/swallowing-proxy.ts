import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of one Redis that can swallow packets: while `swallow()` holds, it accepts connections
 * and bytes in both directions and forwards none of them, as a network that silently drops traffic looks to
 * both ends (connections stay open, nothing is refused, nothing is answered). `release()` forwards what it
 * held, in order, and goes on forwarding: the network is back, and commands sent meanwhile reach Redis then,
 * as TCP's retransmissions would deliver them.
 */

interface Direction {
  to: Socket;
  held: Buffer[];
}

export class SwallowingProxy {
  private server: Server | null = null;
  private swallowing = false;
  private readonly directions = new Set<Direction>();
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: { host: string; port: number }) {}

  private listenPort = 0;

  /** The port it listens on (valid once `listen` resolved). */
  get port(): number {
    return this.listenPort;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.listenPort}`;
  }

  async listen(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.listenPort = (server.address() as AddressInfo).port;
  }

  swallow(): void {
    this.swallowing = true;
  }

  release(): void {
    this.swallowing = false;
    for (const direction of this.directions) {
      for (const chunk of direction.held.splice(0)) direction.to.write(chunk);
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    this.pipe(client, upstream);
    this.pipe(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  }

  private pipe(from: Socket, to: Socket): void {
    const direction: Direction = { to, held: [] };
    this.directions.add(direction);
    from.on('data', (chunk: Buffer) => {
      if (this.swallowing || direction.held.length > 0) direction.held.push(chunk);
      else to.write(chunk);
    });
    from.on('close', () => this.directions.delete(direction));
  }
}
