import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProjectRoot } from '../../../../src/util/project-root.js';

/**
 * Salesforce's published Pub/Sub API definition (pubsub_api.proto, vendored beside this module), loaded for the
 * client and for the local Salesforce's server. The build copies no `.proto` file: like the Lua scripts, it is
 * found from the project root, so the module reads the same file from `connectors/` and from `dist/`.
 */

export const PUBSUB_PROTO_PATH = join(
  findProjectRoot(import.meta.url),
  'connectors',
  'salesforce',
  'changes',
  'pubsub',
  'pubsub_api.proto',
);

/** Fields of the messages used here, as proto-loader hands them over (keepCase, enums as strings). */
export type ReplayPreset = 'LATEST' | 'EARLIEST' | 'CUSTOM';

export interface FetchRequest {
  topic_name?: string;
  replay_preset?: ReplayPreset;
  replay_id?: Buffer;
  num_requested: number;
}

export interface ProducerEvent {
  id: string;
  schema_id: string;
  payload: Buffer;
}

export interface ConsumerEvent {
  event: ProducerEvent;
  replay_id: Buffer;
}

export interface FetchResponse {
  events: ConsumerEvent[];
  latest_replay_id: Buffer;
  rpc_id: string;
  pending_num_requested: number;
}

export interface SchemaRequest {
  schema_id: string;
}

export interface SchemaInfo {
  schema_json: string;
  schema_id: string;
  rpc_id?: string;
}

/** Change Data Capture's channel for Account changes. */
export const ACCOUNT_CHANGE_TOPIC = '/data/AccountChangeEvent';

/** The most events one FetchRequest may ask for (Pub/Sub API reference, Subscribe). */
export const MAX_NUM_REQUESTED = 100;

/** The error code Salesforce puts in the trailers when a replay id is unusable (too old, or not the org's). */
export const REPLAY_ID_CORRUPTED = 'sfdc.platform.eventbus.grpc.subscription.fetch.replayid.corrupted';

/** The trailer that carries Salesforce's own error code. */
export const ERROR_CODE_TRAILER = 'error-code';

let loaded: grpc.ServiceDefinition | null = null;

/** The `eventbus.v1.PubSub` service definition, loaded once per process. */
export function pubSubService(): grpc.ServiceDefinition {
  if (loaded) return loaded;
  const definition = protoLoader.loadSync(PUBSUB_PROTO_PATH, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    eventbus: { v1: { PubSub: grpc.ServiceClientConstructor } };
  };
  loaded = pkg.eventbus.v1.PubSub.service;
  return loaded;
}

/** A client constructor for the service (grpc-js builds the methods from the definition). */
export function pubSubClientConstructor(): grpc.ServiceClientConstructor {
  return grpc.makeGenericClientConstructor(pubSubService(), 'PubSub');
}
