import * as grpc from '@grpc/grpc-js';
import {
  type FetchRequest,
  type FetchResponse,
  pubSubClientConstructor,
  type SchemaInfo,
  type SchemaRequest,
} from './proto.js';

/** Salesforce's session headers on every Pub/Sub call (pubsub_api.proto, the service's comment). */
export interface PubSubSession {
  accessToken: string;
  instanceUrl: string;
  /** The org id. */
  tenantId: string;
}

export type SubscribeCall = grpc.ClientDuplexStream<FetchRequest, FetchResponse>;

interface PubSubStub extends grpc.Client {
  Subscribe(metadata: grpc.Metadata): SubscribeCall;
  GetSchema(
    request: SchemaRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, value?: SchemaInfo) => void,
  ): grpc.ClientUnaryCall;
}

/**
 * One gRPC channel to the Pub/Sub API, shared by the subscriptions of a process (HTTP/2 multiplexes their
 * streams). TLS to Salesforce; plaintext only to the local Salesforce on loopback (`plaintext`).
 */
export class PubSubClient {
  private readonly stub: PubSubStub;

  constructor(
    readonly endpoint: string,
    options: { plaintext: boolean },
  ) {
    const Client = pubSubClientConstructor();
    const credentials = options.plaintext ? grpc.credentials.createInsecure() : grpc.credentials.createSsl();
    this.stub = new Client(endpoint, credentials, {
      // Salesforce closes idle streams after its keepalive window; pings keep NATs from dropping them first.
      'grpc.keepalive_time_ms': 60_000,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    }) as unknown as PubSubStub;
  }

  private metadata(session: PubSubSession): grpc.Metadata {
    const metadata = new grpc.Metadata();
    metadata.set('accesstoken', session.accessToken);
    metadata.set('instanceurl', session.instanceUrl);
    metadata.set('tenantid', session.tenantId);
    return metadata;
  }

  subscribe(session: PubSubSession): SubscribeCall {
    return this.stub.Subscribe(this.metadata(session));
  }

  /** The Avro schema (JSON) of a schema id. */
  getSchema(session: PubSubSession, schemaId: string, timeoutMs = 10_000): Promise<string> {
    return new Promise((resolve, reject) => {
      this.stub.GetSchema(
        { schema_id: schemaId },
        this.metadata(session),
        { deadline: Date.now() + timeoutMs },
        (err, value) =>
          err || !value ? reject(err ?? new Error('empty GetSchema answer')) : resolve(value.schema_json),
      );
    });
  }

  close(): void {
    this.stub.close();
  }
}

/** Salesforce's own error code of a failed call (the `error-code` trailer), when it gave one. */
export function pubSubErrorCode(err: unknown): string | null {
  const metadata = (err as { metadata?: grpc.Metadata } | null)?.metadata;
  const value = metadata instanceof grpc.Metadata ? metadata.get('error-code')[0] : undefined;
  return typeof value === 'string' ? value : null;
}

/** The gRPC status of a failed call, when it is one. */
export function grpcStatusOf(err: unknown): grpc.status | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? (code as grpc.status) : null;
}
