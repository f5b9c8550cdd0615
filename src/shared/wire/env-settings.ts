/**
 * Every environment variable forkflow reads, in one declarative table: its name, who reads it,
 * its default, its flag when a command has one, and what it does. The code reads a
 * `FORKFLOW_*` variable only through {@link envSetting}, whose name argument must be a key of
 * this table (a new variable does not compile until it is described here), and
 * docs/reference/settings.md is printed from it (`npm run docs`). test/unit/docs/settings.test.ts
 * fails when src/ names a `FORKFLOW_*` variable the table does not hold.
 *
 * Pure data, no `process`: workflow-safe code may import it, and every floor of src/ does.
 */

/** Which part of forkflow reads a variable. */
export type EnvReader = 'worker' | 'client' | 'cli' | 'dev' | 'codec-server' | 'serve' | 'gateway' | 'compose' | 'stack' | 'tests';

/** The reference page's sections, in order. */
export const ENV_GROUPS = {
  queues: 'Queues and connection',
  workspace: 'Workspace and containment',
  model: 'Model calls and providers',
  crash: 'Crash safety',
  capacity: 'Capacity and streaming',
  payloads: 'Payloads: storage and encryption',
  operator: 'Operator tools',
  external: 'Other variables forkflow reads',
  development: 'Development and tests',
} as const;

export interface EnvSettingSpec {
  readonly group: keyof typeof ENV_GROUPS;
  readonly readers: readonly EnvReader[];
  /** What applies when it is unset, in words. */
  readonly default: string;
  /** The command-line flag that sets the same thing and wins over the variable, if any. */
  readonly flag?: string;
  readonly description: string;
}

export const ENV_SETTINGS = {
  FORKFLOW_TASK_QUEUE: { group: 'queues', readers: ['worker', 'client', 'cli'], default: '`forkflow`', flag: '--task-queue', description: 'The task queue forks run on: the worker serves it, a client (`ForkflowClient.connect`) and the CLI start forks on it.' },
  FORKFLOW_MODEL_QUEUE: { group: 'queues', readers: ['worker', 'client'], default: 'none', flag: 'worker --model-queue', description: 'A model queue the worker also serves; for a client, the `modelQueue` every fork it starts gets (model calls of all agents on it share one rate limit).' },
  FORKFLOW_MODEL_REQUESTS_PER_MINUTE: { group: 'queues', readers: ['worker'], default: 'none (no limit)', flag: 'worker --model-rate', description: 'The requests per minute the Temporal server hands out on the model queue, across every worker. Needs a model queue.' },
  FORKFLOW_HOST_ID: { group: 'queues', readers: ['worker'], default: 'none', flag: 'worker --host', description: "This host's id when several hosts serve one task queue: the worker also serves `<queue>@<host>`, where the tools of the worktrees it creates run." },
  FORKFLOW_OUTAGE_DEADLINE: { group: 'queues', readers: ['cli'], default: '`5m`', flag: '--outage-deadline', description: 'How long a CLI command keeps retrying while Temporal is unreachable (`30s`, `5m`, `0s`), then exits 5.' },
  FORKFLOW_DEPLOYMENT_NAME: { group: 'queues', readers: ['worker'], default: 'none (no Worker Versioning)', flag: 'worker --deployment', description: 'Worker Versioning: the Worker Deployment this worker serves a build of; needs `FORKFLOW_BUILD_ID`.' },
  FORKFLOW_BUILD_ID: { group: 'queues', readers: ['worker'], default: 'none', flag: 'worker --build-id', description: 'Worker Versioning: the build this worker serves; needs `FORKFLOW_DEPLOYMENT_NAME`.' },

  FORKFLOW_WORKSPACE: { group: 'workspace', readers: ['worker'], default: 'the current directory', flag: 'worker --workspace', description: 'The root for tool activities on this worker.' },
  FORKFLOW_WORKSPACE_ROOTS: { group: 'workspace', readers: ['worker'], default: 'the workspace', description: "`:`-separated absolute directories every fork's `workspace.root` must lie under (canonically); the workspace is always one of them." },
  FORKFLOW_USER_MEMORY_ROOT: { group: 'workspace', readers: ['worker'], default: 'none (no `memory: user`)', description: 'A directory holding one home per tenant (`<root>/<tenant>`, each made by the operator), where the `memory: user` agents of trees started with that `tenant` keep their memory. It must lie outside every workspace root.' },
  FORKFLOW_STATE_DIR: { group: 'workspace', readers: ['worker', 'gateway'], default: '`$XDG_STATE_HOME/forkflow`, else `~/.local/state/forkflow`', description: "The worker's private state (response store and the key that authenticates its entries): created 0700, refused if another user owns it or it is open to others. No tool of any fork can see it." },
  FORKFLOW_SANDBOX: { group: 'workspace', readers: ['worker'], default: 'on', description: '`off`: Bash runs without the OS sandbox, on purpose (logged). Forks that set `requireSandbox` are refused Bash instead.' },
  FORKFLOW_ALLOW_UNSANDBOXED: { group: 'workspace', readers: ['worker'], default: 'off', flag: 'worker --allow-unsandboxed', description: '`1` (or `true`, `yes`, `on`): where the sandbox cannot start, run Bash without it instead of refusing it.' },
  FORKFLOW_BWRAP: { group: 'workspace', readers: ['worker'], default: '`bwrap` on PATH', description: 'The bubblewrap binary, when it is not on PATH.' },
  FORKFLOW_SANDBOX_CGROUP: { group: 'workspace', readers: ['worker'], default: 'on (when the worker can make a pids cgroup)', description: "`off`: do not cap a call's processes with a pids cgroup of the worker's own." },
  FORKFLOW_PROTECTED_PATHS: { group: 'workspace', readers: ['worker'], default: 'none', description: "`:`-separated paths no tool of any fork may see, besides forkflow's own state." },
  FORKFLOW_SANDBOX_TOOL_PATHS: { group: 'workspace', readers: ['worker'], default: 'none', description: '`:`-separated tool folders the sandbox shows read-only, besides those on PATH.' },
  FORKFLOW_MCP_COMMANDS: { group: 'workspace', readers: ['worker'], default: 'none (no stdio MCP server starts)', flag: 'worker --mcp-command', description: 'The stdio MCP commands start inputs may make this worker run: rules separated by newlines or `;` (`[env:NAME…] [cwd:/dir…] /abs/program [arg-pattern…] [...]`, docs/guides/security-model.md). A program inside a workspace root is refused.' },
  FORKFLOW_AGENT_DIRS: { group: 'workspace', readers: ['worker'], default: 'none', flag: 'worker --agent-dir', description: '`:`-separated directories of agent definitions whose stdio MCP servers this worker starts as written there; never a directory forks can write (refused at start).' },
  FORKFLOW_ALLOW_BYPASS_PERMISSIONS: { group: 'workspace', readers: ['worker'], default: 'off', flag: 'worker --allow-bypass-permissions', description: '`1`: agents in `bypassPermissions` mode (their starter set `allowBypassPermissions`) run Bash outside the OS sandbox; otherwise their Bash calls are refused.' },
  FORKFLOW_MCP_VARS: { group: 'workspace', readers: ['worker'], default: 'none (only `MCP_*`)', description: "Comma-separated names of the worker's variables that MCP server configs may expand as `${NAME}`, besides those starting `MCP_`." },
  FORKFLOW_MCP_VAR_HOSTS: { group: 'workspace', readers: ['worker'], default: 'none (a shared variable expands in no HTTP server\'s URL or headers)', description: 'The hosts each shared MCP variable may be sent to, in an HTTP server\'s URL and headers: `NAME=host[|host…]`, comma-separated (checked on the expanded URL). A stdio server\'s command and args take no variable (they are public in `ps`): use its env.' },

  FORKFLOW_MODEL: { group: 'model', readers: ['dev'], default: 'none', description: "Named in `forkflow demo`'s banner only. A fork's model is its parent snapshot's, else its input's `model`, else `claude-sonnet-5-5`." },
  FORKFLOW_PROVIDERS: { group: 'model', readers: ['worker'], default: 'one `anthropic` entry (the client from `ANTHROPIC_API_KEY`)', description: 'Named model providers as JSON (an array of entries, see docs/reference/contracts.md). Not with `FORKFLOW_PROVIDERS_FILE`.' },
  FORKFLOW_PROVIDERS_FILE: { group: 'model', readers: ['worker'], default: 'none', description: "A file holding the providers' JSON: a regular file of the worker's user (or root's) that group and others cannot write. Not with `FORKFLOW_PROVIDERS`." },
  FORKFLOW_COUNT_TOKENS: { group: 'model', readers: ['worker'], default: 'on', description: "`off`: decide a request's size near its context limit on forkflow's estimate alone, for endpoints without `/v1/messages/count_tokens`." },
  FORKFLOW_BATCH_POLL_MS: { group: 'model', readers: ['worker'], default: '`30000`', description: 'Delivery `batch`: how often a submitted Message Batch is polled, in ms. Bad values are ignored.' },
  FORKFLOW_BATCH_WINDOW_MS: { group: 'model', readers: ['worker'], default: '`1000`', description: "Delivery `batch`: how long a batched call waits for other agents' calls to share its batch, in ms (`0` sends each at once)." },
  FORKFLOW_BATCH_MAX_REQUESTS: { group: 'model', readers: ['worker'], default: '`1000`', description: 'Delivery `batch`: the most requests a batch gathers before its window ends.' },

  FORKFLOW_RESPONSE_DIR: { group: 'crash', readers: ['worker'], default: '`<state dir>/responses`', description: 'Where model responses wait until their turn is recorded, so a retried call never bills twice. Private like the state directory; workers that may take over each other\'s calls share it (and its key).' },
  FORKFLOW_RESPONSE_JOURNAL: { group: 'crash', readers: ['worker'], default: 'none', description: 'A JSON-lines audit of every response kept (`{"kept": "<provider request id>", "at": <ms>, workflowId, runId, activityId, turn}`).' },
  FORKFLOW_MODEL_GATEWAY: { group: 'crash', readers: ['worker'], default: 'none', description: 'The URL of a `forkflow gateway`: model calls go through it, and a call whose worker dies is finished and handed to the retry, not paid for twice.' },
  FORKFLOW_GATEWAY_DIR: { group: 'crash', readers: ['gateway', 'worker'], default: '`<state dir>/gateway`', flag: 'gateway --dir', description: "Where the gateway's finished calls wait for their retry: a directory of its user's alone." },
  FORKFLOW_ROOT_UPDATES: { group: 'crash', readers: ['worker'], default: '`4`', description: 'Workflow Updates in flight from this process to one tree root, for trees started before budget shares only (a tree that lends shares sends its root signals, no updates: docs/guides/scale.md).' },

  FORKFLOW_MAX_CACHED_WORKFLOWS: { group: 'capacity', readers: ['worker'], default: "the SDK's (from the heap limit)", description: 'Workflows (forks) kept in memory between their tasks. A whole number of at least 1.' },
  FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: { group: 'capacity', readers: ['worker'], default: "the SDK's", description: 'Workflow tasks the worker takes at once (8 measured well). A whole number of at least 1.' },
  FORKFLOW_MAX_CONCURRENT_ACTIVITIES: { group: 'capacity', readers: ['worker'], default: "the SDK's (100)", description: 'Model and tool calls run at once; a worker serving hundreds of forks wants several hundred. A whole number of at least 1.' },
  FORKFLOW_STICKY_TIMEOUT_MS: { group: 'capacity', readers: ['worker'], default: '`500`', description: "How long, in ms, a workflow task waits for the worker that holds its workflow in cache before any worker may take it (and replay its history). Short: a crashed worker's agents move on fast. Where a big tree's root shares busy workers, raise it (10000, the SDK's default) so the root is not replayed elsewhere (docs/guides/scale.md). A whole number of at least 1." },
  FORKFLOW_LIVE_STREAM: { group: 'capacity', readers: ['worker'], default: 'on', description: "`off`: this worker's model calls publish no deltas (forks still end their streams with `done`)." },
  FORKFLOW_LIVE_STREAM_BATCH_MS: { group: 'capacity', readers: ['worker'], default: '`100`', description: 'How often a model call sends its deltas to a watched stream, in ms.' },
  FORKFLOW_WORKFLOW_BUNDLE: { group: 'capacity', readers: ['worker'], default: 'bundle at start', flag: 'worker --workflow-bundle', description: 'A pre-built workflow bundle (faster start); must be built with the same encryption setting as the worker.' },
  FORKFLOW_LOG_LEVEL: { group: 'capacity', readers: ['worker'], default: '`INFO`', description: "The log level of `forkflow worker`'s Temporal runtime: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`." },
  FORKFLOW_METRICS_ADDRESS: { group: 'capacity', readers: ['worker', 'dev'], default: 'off (`worker`); `127.0.0.1:9464` or a free port (`dev`, `demo`)', flag: '--metrics', description: '`ip:port` of the Prometheus endpoint.' },

  FORKFLOW_REQUIRE_ENCRYPTED_INPUTS: { group: 'payloads', readers: ['worker'], default: 'none (plaintext starts, signals and updates are taken)', flag: 'worker --require-encrypted-inputs', description: 'With encryption keys: `always`, or an ISO 8601 time from which on (by a workflow task\'s recorded time, so replays agree), start inputs, signals and updates must be encrypted and bound to the workflow they reach; others are refused as undecodable input.' },
  FORKFLOW_STORAGE: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: '`fs`', description: 'External payload storage: `fs`, `s3` or `off`.' },
  FORKFLOW_STORAGE_THRESHOLD: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: "`262144` (the SDK's 256 KiB)", description: 'Payloads of at least this many bytes go to the blob store, smaller ones stay inline.' },
  FORKFLOW_BLOB_DIR: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: '`.forkflow/blobs` under the current directory', description: "The `fs` driver's folder; every worker, client and CLI of a deployment must share it." },
  FORKFLOW_S3_BUCKET: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: 'required with `FORKFLOW_STORAGE=s3`', description: "The `s3` driver's bucket." },
  FORKFLOW_S3_PREFIX: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: 'none', description: 'A folder of the bucket every object goes under (`team/forkflow` → `team/forkflow/v0/…`).' },
  FORKFLOW_S3_REGION: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: '`AWS_REGION`, then `AWS_DEFAULT_REGION`', description: "The bucket's region; one of the three is required with `FORKFLOW_STORAGE=s3`." },
  FORKFLOW_S3_ENDPOINT: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: "AWS's", description: 'An S3-compatible server (MinIO, versitygw, Ceph…), `http(s)://host:port`.' },
  FORKFLOW_S3_FORCE_PATH_STYLE: { group: 'payloads', readers: ['worker', 'client', 'cli'], default: '`true` with an endpoint, else `false`', description: '`host/bucket/key` rather than `bucket.host/key`.' },
  FORKFLOW_ENCRYPTION_KEYS: { group: 'payloads', readers: ['worker', 'client', 'cli', 'codec-server'], default: 'none (no encryption)', description: '`id:base64key[,id:base64key…]`: payload encryption keys, the first encrypts; each key 32 bytes. With keys set, logs are redacted. Not with `FORKFLOW_ENCRYPTION_KEY_FILE`.' },
  FORKFLOW_ENCRYPTION_KEY_FILE: { group: 'payloads', readers: ['worker', 'client', 'cli', 'codec-server'], default: 'none', description: 'A JSON file `{ "v": 1, "keys": [{ "id", "key" }, …] }` holding the keys instead (keeps them out of the environment). No tool of any fork can see it.' },

  FORKFLOW_CODEC_SERVER_TOKEN: { group: 'operator', readers: ['codec-server'], default: 'one made per run, printed', description: 'The token `forkflow codec-server` requires: at least 16 of `A-Z a-z 0-9 . _ ~ -`.' },
  FORKFLOW_WEB_TOKEN: { group: 'operator', readers: ['serve'], default: 'one made per run, printed', description: 'The token `forkflow serve` (the web view) requires: at least 16 of `A-Z a-z 0-9 . _ ~ -`.' },
  FORKFLOW_TOOLS_DIR: { group: 'operator', readers: ['dev'], default: "the package's `.tools/`", description: 'Where the pinned Temporal CLI is installed on first need (`forkflow dev`, `demo`, the tests).' },
  FORKFLOW_STACK_MTLS: { group: 'operator', readers: ['stack'], default: 'off', description: "`1`: `npm run stack` makes a CA and certificates into `.forkflow/stack/tls/` and its Temporal frontend requires a client certificate of that CA (docs/guides/security-model.md); it prints the `TEMPORAL_TLS_*` settings clients need." },
  FORKFLOW_BIND_ADDRESS: { group: 'operator', readers: ['compose'], default: '`127.0.0.1`', description: '`docker-compose.yml` only: the interface its ports are published on.' },

  ANTHROPIC_API_KEY: { group: 'external', readers: ['worker', 'dev'], default: 'none (`dev`, `demo`: the offline model)', description: "The Anthropic API key of the worker's default provider." },
  ANTHROPIC_BASE_URL: { group: 'external', readers: ['worker', 'dev', 'gateway'], default: "Anthropic's API", description: "A proxy or a local model server for the default provider; the gateway's default upstream." },
  TEMPORAL_ADDRESS: { group: 'external', readers: ['worker', 'client', 'cli'], default: '`localhost:7233`', flag: '--address', description: "Read by `@temporalio/envconfig` with `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_*` and profiles (the Temporal SDK's own settings)." },
  TEMPORAL_NAMESPACE: { group: 'external', readers: ['worker', 'client', 'cli'], default: '`default`', flag: '--namespace', description: 'The Temporal namespace (`@temporalio/envconfig`).' },
  TEMPORAL_CLI: { group: 'external', readers: ['dev'], default: '`temporal` on PATH, else the pinned install', description: 'A Temporal CLI binary for `forkflow dev`, `demo` and the tests.' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { group: 'external', readers: ['worker'], default: 'none (no tracing interceptors)', description: 'Export spans over OTLP/HTTP (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` too); `OTEL_SERVICE_NAME` names the service (default `forkflow-worker`).' },
  XDG_STATE_HOME: { group: 'external', readers: ['worker', 'gateway'], default: '`~/.local/state`', description: 'Where the default state directory lies.' },

  FORKFLOW_RECORD_HISTORIES: { group: 'development', readers: ['tests'], default: 'off', description: '`1`: the workflow tests write their runs\' histories as replay fixtures (`npm run fixtures:record`).' },
  FORKFLOW_SOAK: { group: 'development', readers: ['tests'], default: 'off', description: '`1`: the long soak variants of the Temporal tests (`npm run bench:soak`).' },
  FORKFLOW_TEST_ENV: { group: 'development', readers: ['tests'], default: 'set by jest', description: "The file where the temporal project's global setup leaves the dev server's address for the test files." },
} as const satisfies Record<string, EnvSettingSpec>;

/** The name of a variable of the table. */
export type EnvSettingName = keyof typeof ENV_SETTINGS;

/** The environment as Node gives it (no `process` here: callers pass theirs). */
export type EnvLike = Readonly<Record<string, string | undefined>>;

/**
 * A variable's raw value, exactly as the environment holds it (`undefined` when unset): callers
 * keep their own reading of empty strings. The name must be one of {@link ENV_SETTINGS}.
 */
export function envSetting(env: EnvLike, name: EnvSettingName): string | undefined {
  return env[name];
}
