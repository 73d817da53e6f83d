import type { ServiceEntry } from '../admission/directory.js';
import type { Logger } from '../observe/logger.js';
import { Instance, type EngineHealth, type GateInstance } from './instance.js';
import type { GateToServiceProto, ServiceToGateBodies, ServiceToGateProto } from '../../proto/src/index.js';

/** Where a local worker sends its answers (any ServiceToGateProto a model service could send). */
export type LocalReply = (answer: ServiceToGateProto) => void;

/**
 * The model behind an in-process instance. It receives exactly what a dialled-in model service
 * would receive on its stream (a request with its `requestId` and headers, further `partialPredict`
 * messages of a streamed request, `cancel`) and answers the same way, through `reply`: `predict`,
 * `partialPredict` frames, `error`, and `heartBeat` with load headers.
 */
export interface LocalWorker {
  receive(message: GateToServiceProto, reply: LocalReply): void;
  /** The instance was detached (gateway shutdown or the plugin's own close): stop everything. */
  close?(): void;
}

export interface LocalInstanceOptions {
  /** Names the instance (its `bootUuid`, in logs and `x-served-by`), e.g. `upstream:vllm-a`. */
  readonly name: string;
  /** Where the work happens, e.g. the engine's base URL host. */
  readonly hostname?: string;
  readonly worker: LocalWorker;
}

const BODIES: readonly (keyof ServiceToGateBodies)[] = [
  'predict',
  'partialPredict',
  'error',
  'ext',
  'batch',
  'fit',
  'fitStatus',
  'heartBeat',
  'status',
];

/** What the owner of an in-process instance controls: whether it takes requests, and its removal. */
export interface LocalInstanceHandle {
  readonly instance: GateInstance;
  /** false takes the instance out of routing (a failed health check), true puts it back. */
  setServing(serving: boolean): void;
  /** What the owner's probes found about the engine (shown in instance views, never used to route). */
  reportHealth(health: EngineHealth): void;
  /** Removes the instance; calls still in flight fail with SERVICE_DISCONNECTED. */
  detach(reason: string): void;
}

/**
 * An instance the gateway runs itself (docs/design.md section 2). To the Gate it is one more instance of
 * its service: requests go in through `send`, answers come back through the same path a stream's
 * messages take.
 */
export class LocalInstance extends Instance {
  readonly kind = 'local' as const;
  readonly bootUuid: string;
  readonly hostname: string | undefined;
  #engineHealth: EngineHealth | undefined;
  readonly #worker: LocalWorker;
  readonly #log: Logger;
  readonly #reply: LocalReply;

  constructor(
    service: ServiceEntry,
    options: LocalInstanceOptions,
    onAnswer: (instance: LocalInstance, answer: ServiceToGateProto) => void,
    log: Logger,
  ) {
    super(service);
    this.bootUuid = options.name;
    this.hostname = options.hostname;
    this.#worker = options.worker;
    this.#log = log.child({ serviceId: service.id, service: service.name, instance: options.name });
    this.#reply = (answer) => {
      if (this.state !== 'closed') onAnswer(this, withBody(answer));
    };
  }

  get log(): Logger {
    return this.#log;
  }

  override get engineHealth(): EngineHealth | undefined {
    return this.#engineHealth;
  }

  reportHealth(health: EngineHealth): void {
    this.#engineHealth = health;
  }

  /** An in-process worker has no method descriptor: requests go as the caller sent them. */
  declaresConfig(): boolean {
    return false;
  }

  send(message: GateToServiceProto): boolean {
    if (this.state === 'closed') return false;
    try {
      this.#worker.receive(message, this.#reply);
      return true;
    } catch (err) {
      this.#log.warn({ err }, 'local instance refused a message');
      return false;
    }
  }

  /** Local workers take their messages as function calls: nothing is buffered on the way. */
  whenWritable(): Promise<void> {
    return Promise.resolve();
  }

  protected closeTransport(): void {
    try {
      this.#worker.close?.();
    } catch (err) {
      this.#log.warn({ err }, 'local worker close failed');
    }
  }
}

/** The oneof `body` a decoded stream message carries, filled in for answers built in process. */
function withBody(answer: ServiceToGateProto): ServiceToGateProto {
  if (answer.body) return answer;
  const body = BODIES.find((name) => answer[name] !== undefined);
  return body ? { ...answer, body } : answer;
}
