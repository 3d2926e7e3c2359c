import { z } from 'zod';
import { areasConfig, areasEnv } from './config/areas.js';
import { sealingSettingsProblem } from './config/sealing.js';
import { clusterAuthProblem, hostPortList, int, optionalUrlWithScheme, urlWithScheme } from './env-rules.js';

const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .optional()
    .transform((v) => v ?? 'development'),
  PORT: int(3000, 0),
  HOST: z
    .string()
    .optional()
    .transform((v) => v ?? '0.0.0.0'),
  DATABASE_URL: urlWithScheme(['postgres:', 'postgresql:'], 'postgres://postgres@127.0.0.1:5432/growth_agent'),
  DATABASE_POOL_MAX: int(10),
  // Behind PgBouncer in transaction pooling (docs/decisions/stores.md, "Postgres behind a pooler").
  DATABASE_POOLER: z
    .enum(['none', 'transaction'])
    .optional()
    .transform((v) => v ?? 'none'),
  DATABASE_DIRECT_URL: optionalUrlWithScheme(['postgres:', 'postgresql:']),
  REDIS_URL: urlWithScheme(['redis:', 'rediss:'], 'redis://127.0.0.1:6379'),
  // Set: the service runs on the Redis Cluster these nodes belong to, and REDIS_URL is not used.
  REDIS_CLUSTER_NODES: hostPortList(),
  REDIS_CLUSTER_USERNAME: z.string().min(1).optional(),
  REDIS_CLUSTER_PASSWORD: z.string().min(1).optional(),
  // How long an API-side Redis command may take before it fails (and the request answers 503).
  REDIS_COMMAND_TIMEOUT_MS: int(2_000),
  BASE_URL: z.string().url('must be an absolute URL such as https://agent.example.com').optional(),
  ADMIN_USER: z.string().min(1).optional(),
  ADMIN_PASSWORD: z.string().min(1).optional(),
  // Bull Board: read-only unless an operator opts in; wrong logins limited per address.
  ADMIN_READ_ONLY: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v !== 'false'),
  ADMIN_LOGIN_MAX_FAILURES: int(5),
  ADMIN_LOGIN_WINDOW_SECONDS: int(15 * 60),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .optional()
    .transform((v) => v ?? 'info'),
  QUEUE_PREFIX: z
    .string()
    .regex(/^\{[A-Za-z0-9_-]+\}$/, 'must be a Redis Cluster hash tag such as {gas}')
    .optional()
    .transform((v) => v ?? '{gas}'),
  TOKEN_PREFIX: z
    .string()
    .regex(/^[a-z]{2,8}$/, 'must be 2 to 8 lowercase letters')
    .optional()
    .transform((v) => v ?? 'gat'),
  RATE_READS_PER_MINUTE: int(300),
  RATE_READS_BURST: int(600),
  RATE_WRITES_PER_MINUTE: int(60),
  RATE_WRITES_BURST: int(120),
  RATE_MESSAGES_PER_MINUTE: int(30),
  RATE_MESSAGES_BURST: int(60),
  RATE_ACCOUNT_PER_MINUTE: int(900),
  RATE_ACCOUNT_BURST: int(1800),
  SHUTDOWN_GRACE_MS: int(10_000),
  // A workers process writes this file every WORKER_HEARTBEAT_MS; its health check reads it (bin/worker-health.ts).
  WORKER_HEARTBEAT_FILE: z.string().min(1).optional(),
  WORKER_HEARTBEAT_MS: int(5_000, 100),
  // Parse every 2xx reply with its route's response schema (500 on a mismatch). Tests turn it on; off in
  // production, where it would only cost time and turn a documentation slip into an outage.
  CHECK_RESPONSES: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
  // Workflows: how long one step may take the agent, and how often a run looks at it.
  WORKFLOW_STEP_TIMEOUT_MS: int(10 * 60 * 1000),
  WORKFLOW_POLL_MS: int(500),
  // How many runs the workflow-runs pool moves at once, and how much of a worker one job may take
  // (passes, milliseconds of waiting) before its run is handed to a new job queued behind the others.
  WORKFLOW_RUNS_CONCURRENCY: int(4),
  WORKFLOW_RUN_PASSES_PER_JOB: int(20),
  WORKFLOW_RUN_SLICE_MS: int(30_000),
  WORKFLOW_RUN_YIELD_DELAY_MS: int(1_000, 0),
  // Workflows one account keeps (deleted ones do not count); one more is 409 `rejected`.
  WORKFLOWS_PER_ACCOUNT: int(100, 1),
  // Leads and block list. CURSOR_SECRET signs list cursors; unset, the first process makes a
  // random one and keeps it in the database (src/secrets). Setting a new one voids outstanding cursors.
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  // Byte budget of one GET /leads page (the serialised `leads` array).
  LEADS_PAGE_MAX_BYTES: int(262_144, 1_024),
  // The agent.
  AGENT_BRAIN: z
    .enum(['offline', 'llm'])
    .optional()
    .transform((v) => v ?? 'offline'),
  LLM_BASE_URL: urlWithScheme(['http:', 'https:'], 'https://api.openai.com/v1'),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z
    .string()
    .optional()
    .transform((v) => v ?? 'gpt-4o-mini'),
  LLM_TIMEOUT_MS: int(30_000),
  LLM_MAX_RETRIES: int(2, 0),
  LLM_BACKOFF_MS: int(500),
  AGENT_STEP_DELAY_MS: int(0, 0),
  AGENT_MAX_STEPS: int(12),
  AGENT_TURN_CONCURRENCY: int(4),
  AGENT_TURN_LOCK_MS: int(5_000),
  AGENT_TURN_STALLED_INTERVAL_MS: int(1_000),
  AGENT_QUEUED_MESSAGE_TTL_MS: int(6 * 60 * 60 * 1000),
  AGENT_WAIT_POLL_MS: int(1_000),
  MAINTENANCE_SWEEP_MS: int(60_000),
  MAINTENANCE_ORPHAN_AFTER_MS: int(30_000),
  MAINTENANCE_CONCURRENCY: int(1),
  // Inbound webhooks. Spec 8.2: 60 accepted per hook and 120 per account in any rolling hour;
  // raised only for benchmarks.
  WEBHOOK_HOOK_PER_HOUR: int(60),
  WEBHOOK_ACCOUNT_PER_HOUR: int(120),
  // Jobs one webhook-events worker process hands over at once (gathered into shared transactions).
  WEBHOOK_EVENTS_CONCURRENCY: int(128),
  // Days a hook's delivery log keeps a delivery; the maintenance sweep deletes older ones.
  WEBHOOK_DELIVERY_RETENTION_DAYS: int(30),
  // Review queue and mail.
  MAIL_TRANSPORT: z
    .enum(['local', 'smtp', 'http'])
    .optional()
    .transform((v) => v ?? 'local'),
  MAIL_FROM: z
    .string()
    .optional()
    .transform((v) => v ?? 'Growth Agent <agent@localhost>'),
  MAIL_LOCAL_DIR: z
    .string()
    .optional()
    .transform((v) => v ?? 'var/mail'),
  SMTP_HOST: z
    .string()
    .optional()
    .transform((v) => v ?? '127.0.0.1'),
  SMTP_PORT: int(587),
  SMTP_SECURE: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  MAIL_API_URL: urlWithScheme(['http:', 'https:'], 'http://127.0.0.1:8025/v1'),
  MAIL_API_KEY: z.string().optional(),
  MAIL_CONNECT_TIMEOUT_MS: int(5_000),
  MAIL_SEND_TIMEOUT_MS: int(15_000),
  MAIL_RETRY_AFTER_SECONDS: int(30),
  MAIL_RECONCILE_DELAY_MS: int(10_000),
  MAIL_RECONCILE_WINDOW_MS: int(15 * 60 * 1000),
  MAIL_SWEEP_MS: int(60_000),
  // Jobs one shipments / card-timers worker process runs at once (card timers make the background sends).
  MAIL_SENDS_CONCURRENCY: int(4),
  CARD_TIMERS_CONCURRENCY: int(8),
  TRUST_AUTO_RESOLVE_AFTER: int(20),
  TRUST_AUTO_RESOLVE_DELAY_MS: int(4 * 60 * 60 * 1000),
  REVIEW_REVISION_DELAY_MS: int(30_000, 0),
  CARD_SWEEP_MS: int(10_000),
  // The mail loop: the inbound SMTP listener (0 = off), its domain, the size limit.
  ...areasEnv,
});

export type Bucket = 'reads' | 'writes' | 'messages' | 'account';
export interface BucketLimit {
  perMinute: number;
  burst: number;
}

export type Config = ReturnType<typeof buildConfig>;

function buildConfig(env: z.output<typeof envSchema>) {
  // Each area's settings under one key (`mail.smtp`, `mail.identity`, `agent.limits`…), whichever file parses them.
  const { nested, ...areas } = areasConfig(env);
  return {
    ...areas,
    env: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    databasePoolMax: env.DATABASE_POOL_MAX,
    /** `transaction`: DATABASE_URL is a transaction pooler; only unnamed statements, no session state. */
    databasePooler: env.DATABASE_POOLER,
    /** Postgres itself, past the pooler: migrations, database creation and the posts listener use it. */
    databaseDirectUrl: env.DATABASE_DIRECT_URL ?? null,
    redisUrl: env.REDIS_URL,
    /** The Redis Cluster's startup nodes (REDIS_CLUSTER_NODES), or null: one Redis at redisUrl. */
    redisClusterNodes: env.REDIS_CLUSTER_NODES,
    /** The cluster nodes' AUTH (REDIS_CLUSTER_PASSWORD, with REDIS_CLUSTER_USERNAME for an ACL user), or null. */
    redisClusterAuth: env.REDIS_CLUSTER_PASSWORD ? { username: env.REDIS_CLUSTER_USERNAME, password: env.REDIS_CLUSTER_PASSWORD } : null,
    /** How long a producer (API-side) Redis command and connect may take before failing (REDIS_COMMAND_TIMEOUT_MS). */
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    baseUrl: (env.BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    admin:
      env.ADMIN_USER && env.ADMIN_PASSWORD
        ? {
            user: env.ADMIN_USER,
            password: env.ADMIN_PASSWORD,
            /** Retry, promote, clean, edit, delete, pause… are refused unless ADMIN_READ_ONLY=false. */
            readOnly: env.ADMIN_READ_ONLY,
            /** Wrong logins one address may make in a window before every board request answers 429. */
            maxFailures: env.ADMIN_LOGIN_MAX_FAILURES,
            windowSeconds: env.ADMIN_LOGIN_WINDOW_SECONDS,
          }
        : null,
    logLevel: env.LOG_LEVEL,
    queuePrefix: env.QUEUE_PREFIX,
    tokenPrefix: env.TOKEN_PREFIX,
    limits: {
      reads: { perMinute: env.RATE_READS_PER_MINUTE, burst: env.RATE_READS_BURST },
      writes: { perMinute: env.RATE_WRITES_PER_MINUTE, burst: env.RATE_WRITES_BURST },
      messages: { perMinute: env.RATE_MESSAGES_PER_MINUTE, burst: env.RATE_MESSAGES_BURST },
      account: { perMinute: env.RATE_ACCOUNT_PER_MINUTE, burst: env.RATE_ACCOUNT_BURST },
    } satisfies Record<Bucket, BucketLimit>,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    /** Where and how often a process running pools says it is alive and reaches its stores; null: it does not. */
    heartbeat: env.WORKER_HEARTBEAT_FILE ? { file: env.WORKER_HEARTBEAT_FILE, everyMs: env.WORKER_HEARTBEAT_MS } : null,
    /** Every 2xx reply is parsed with its route's response schema; a mismatch is a logged 500. */
    checkResponses: env.CHECK_RESPONSES,
    workflows: {
      stepTimeoutMs: env.WORKFLOW_STEP_TIMEOUT_MS,
      pollMs: env.WORKFLOW_POLL_MS,
      concurrency: env.WORKFLOW_RUNS_CONCURRENCY,
      passesPerJob: env.WORKFLOW_RUN_PASSES_PER_JOB,
      jobSliceMs: env.WORKFLOW_RUN_SLICE_MS,
      yieldDelayMs: env.WORKFLOW_RUN_YIELD_DELAY_MS,
      perAccount: env.WORKFLOWS_PER_ACCOUNT,
    },
    /** CURSOR_SECRET, or null: then the runtime's cursorSecret() reads the one kept in the database. */
    cursorSecret: env.CURSOR_SECRET ?? null,
    leadsPageMaxBytes: env.LEADS_PAGE_MAX_BYTES,
    agent: {
      brain: env.AGENT_BRAIN,
      llm: {
        baseUrl: env.LLM_BASE_URL.replace(/\/+$/, ''),
        apiKey: env.LLM_API_KEY ?? null,
        model: env.LLM_MODEL,
        timeoutMs: env.LLM_TIMEOUT_MS,
        maxRetries: env.LLM_MAX_RETRIES,
        backoffMs: env.LLM_BACKOFF_MS,
      },
      limits: nested.agentLimits,
      /** Pause before each step of a turn; 0 in production, raised by tests to make turns slow. */
      stepDelayMs: env.AGENT_STEP_DELAY_MS,
      maxSteps: env.AGENT_MAX_STEPS,
      turnConcurrency: env.AGENT_TURN_CONCURRENCY,
      /** BullMQ lock (renewed every half of it) and stall check of the agent-turns and webhook-events jobs. */
      turnLockMs: env.AGENT_TURN_LOCK_MS,
      turnStalledIntervalMs: env.AGENT_TURN_STALLED_INTERVAL_MS,
      /** A `queue: true` message still queued after this long fails (spec 8.3: six hours). */
      queuedMessageTtlMs: env.AGENT_QUEUED_MESSAGE_TTL_MS,
      /** Upper bound between state reads while a POST waits (a Redis notice usually wakes it sooner). */
      waitPollMs: env.AGENT_WAIT_POLL_MS,
    },
    mail: {
      transport: env.MAIL_TRANSPORT,
      from: env.MAIL_FROM,
      localDir: env.MAIL_LOCAL_DIR,
      smtp: {
        host: env.SMTP_HOST,
        port: env.SMTP_PORT,
        secure: env.SMTP_SECURE,
        auth: env.SMTP_USER ? { user: env.SMTP_USER, pass: env.SMTP_PASSWORD ?? '' } : null,
        ...nested.mailSmtp,
      },
      identity: nested.mailIdentity,
      failures: nested.mailFailures,
      api: { url: env.MAIL_API_URL.replace(/\/+$/, ''), key: env.MAIL_API_KEY ?? null },
      connectTimeoutMs: env.MAIL_CONNECT_TIMEOUT_MS,
      /** After this long without the provider's answer, the answer counts as lost (503 delivery_pending). */
      sendTimeoutMs: env.MAIL_SEND_TIMEOUT_MS,
      retryAfterSeconds: env.MAIL_RETRY_AFTER_SECONDS,
      /** First reconciliation look after an answer was lost; later ones back off. */
      reconcileDelayMs: env.MAIL_RECONCILE_DELAY_MS,
      /** A fence still unsettled after this long becomes a card asking a person; never a blind resend. */
      reconcileWindowMs: env.MAIL_RECONCILE_WINDOW_MS,
      sweepEveryMs: env.MAIL_SWEEP_MS,
      /** `shipments` jobs (reconciliations, the sweep) one worker process runs at once. */
      sendsConcurrency: env.MAIL_SENDS_CONCURRENCY,
    },
    review: {
      /** Approvals shipped unchanged (per account and kind of work) before new cards auto-resolve. */
      trustThreshold: env.TRUST_AUTO_RESOLVE_AFTER,
      /** How long an auto-resolving card waits for a person first. */
      autoResolveDelayMs: env.TRUST_AUTO_RESOLVE_DELAY_MS,
      /** Spec 8.3: the agent starts revising about 30 seconds after request-changes. */
      revisionDelayMs: env.REVIEW_REVISION_DELAY_MS,
      /** The card-timers repair sweep: timers whose job was lost, cards the ladder has not seen. */
      sweepEveryMs: env.CARD_SWEEP_MS,
      /** Timer jobs (and the background mail sends they make) one card-timers worker process runs at once. */
      timersConcurrency: env.CARD_TIMERS_CONCURRENCY,
    },
    maintenance: {
      sweepEveryMs: env.MAINTENANCE_SWEEP_MS,
      /** A queued turn whose job has not started after this long is queued again. */
      orphanAfterMs: env.MAINTENANCE_ORPHAN_AFTER_MS,
      /** Sweep jobs one maintenance worker process runs at once. */
      concurrency: env.MAINTENANCE_CONCURRENCY,
      /** Each sweep's interval (MAINTENANCE_<AREA>_SWEEP_MS, else MAINTENANCE_SWEEP_MS). */
      sweeps: nested.maintenanceSweeps,
    },
    webhooks: {
      /** Accepted deliveries per hook / per account in any rolling hour (spec 8.2). */
      perHook: env.WEBHOOK_HOOK_PER_HOUR,
      perAccount: env.WEBHOOK_ACCOUNT_PER_HOUR,
      /** Jobs one webhook-events worker process runs at once. */
      eventsConcurrency: env.WEBHOOK_EVENTS_CONCURRENCY,
      /** How long the delivery log keeps a delivery (ms); an accepted one not yet handed over is kept. */
      deliveryRetentionMs: env.WEBHOOK_DELIVERY_RETENTION_DAYS * 24 * 60 * 60 * 1000,
    },
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
  }
}

/** Parses the environment once; every bad variable is named in the thrown ConfigError. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`));
  }
  const authProblem = clusterAuthProblem(parsed.data) ?? sealingSettingsProblem(parsed.data);
  if (authProblem) throw new ConfigError([authProblem]);
  return buildConfig(parsed.data);
}
