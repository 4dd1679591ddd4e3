// stepfunctions.mjs stands in for AWS Step Functions on this machine (kiln aws-local): an HTTP
// server on 127.0.0.1 speaking the Step Functions JSON 1.0 protocol (StartExecution,
// StopExecution, DescribeExecution, GetExecutionHistory, SendTaskHeartbeat, SendTaskSuccess,
// SendTaskFailure) for one
// state machine, whose ASL it runs with
// aws-local-stepfunctions. Its task states are served locally: Lambda tasks through the Lambda
// stand-in's Invoke API, codebuild:startBuild.sync through the CodeBuild stand-in (StartBuild,
// then BatchGetBuilds until the build ends). An execution that ends FAILED, TIMED_OUT or ABORTED
// invokes the "ended" function with the EventBridge event AWS would send.
//
// aws-local-stepfunctions knows neither task tokens nor HeartbeatSeconds, so the stand-in does
// what Step Functions does for the CodeBuild task: each execution gets a task token of its own
// (random, unguessable) as $$.Task.Token, SendTaskHeartbeat with it resets the task's heartbeat
// clock, and a task with HeartbeatSeconds that hears nothing for that long stops its CodeBuild
// build and fails with States.HeartbeatTimeout. lambda:invoke.waitForTaskToken (WaitForAgent)
// invokes its function with the payload (the token filled in) and then waits, as Step Functions
// does, until SendTaskSuccess or SendTaskFailure with the token arrives, its HeartbeatSeconds
// pass without a SendTaskHeartbeat (States.HeartbeatTimeout), or the execution is stopped.
//
// Settings (environment): KILN_SFN_MODULE (path of aws-local-stepfunctions' main.node.esm.js),
// KILN_SFN_DEFINITION (file of the ASL, placeholders filled), KILN_SFN_STATE_MACHINE_ARN,
// KILN_SFN_LAMBDA_ENDPOINT, KILN_SFN_CODEBUILD_ENDPOINT, KILN_SFN_ENDED_FUNCTION,
// KILN_SFN_POLL_MS (BatchGetBuilds interval, default 1000), KILN_SFN_MAX_HISTORY (an execution's
// history quota, default 25000), KILN_SFN_HEARTBEAT_MS (for tests:
// replaces the HeartbeatSeconds of every state that has one), KILN_SFN_ACCESS_KEY_ID (the state machine role's key:
// its Lambda and CodeBuild calls carry it in a SigV4 Authorization header's Credential, so that
// aws-local checks them against the role) and KILN_SFN_EVENTS_ACCESS_KEY_ID (EventBridge's, for
// the ended function). It prints "listening <port>" once
// it listens, "transitions <execution ARN> <count>" when an execution's events end, and stops on SIGTERM or when its standard input closes.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

if (typeof Promise.withResolvers !== 'function') {
  // Node 20 lacks it; aws-local-stepfunctions uses it.
  Promise.withResolvers = function withResolvers() {
    let resolve, reject;
    const promise = new this((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}

const env = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (fallback !== undefined) return fallback;
    console.error(`stepfunctions: ${name} is not set`);
    process.exit(2);
  }
  return v;
};
const { StateMachine, ExecutionAbortedError, ExecutionTimeoutError } = await import(pathToFileURL(env('KILN_SFN_MODULE')).href);
const definition = JSON.parse(readFileSync(env('KILN_SFN_DEFINITION'), 'utf8'));
const stateMachineArn = env('KILN_SFN_STATE_MACHINE_ARN');
const lambdaEndpoint = env('KILN_SFN_LAMBDA_ENDPOINT');
const codebuildEndpoint = env('KILN_SFN_CODEBUILD_ENDPOINT');
const endedFunction = env('KILN_SFN_ENDED_FUNCTION');
const pollMs = Number(env('KILN_SFN_POLL_MS', '1000'));
const heartbeatOverrideMs = Number(env('KILN_SFN_HEARTBEAT_MS', '0'));
// Step Functions' quota of history events per execution: past it the execution fails.
const maxHistory = Number(env('KILN_SFN_MAX_HISTORY', '25000'));
const accessKeyId = process.env.KILN_SFN_ACCESS_KEY_ID || '';
const eventsAccessKeyId = process.env.KILN_SFN_EVENTS_ACCESS_KEY_ID || '';
const [, , , region, account, , machineName] = stateMachineArn.split(':');
const machine = new StateMachine(definition, { validationOptions: { checkArn: false } });

/** executions by ARN: { arn, name, input, status, startDate, stopDate, output, error, cause, run, codebuildId, taskToken, task } */
const executions = new Map();
/** executions by their task token */
const byToken = new Map();

class AWSError extends Error {
  constructor(type, message, status = 400) { super(message); this.type = type; this.status = status; }
}

const epoch = (d) => d.getTime() / 1000;

// authorization names the caller as a SigV4 header does (the stand-ins read its Credential; the
// signature is not checked).
function authorization(key, service) {
  if (!key) return {};
  const date = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  return { Authorization: `AWS4-HMAC-SHA256 Credential=${key}/${date}/${region}/${service}/aws4_request, SignedHeaders=host, Signature=0` };
}

// invoke calls a function through the Lambda stand-in; a function error throws an error named
// after its errorType, with Lambda's error JSON as its cause, as Step Functions reports it.
async function invoke(functionName, payload, key = accessKeyId) {
  let res;
  try {
    res = await fetch(`${lambdaEndpoint}/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', ...authorization(key, 'lambda') }, body: JSON.stringify(payload),
    });
  } catch (e) {
    throw named('Lambda.SdkClientException', String(e));
  }
  const body = await res.text();
  if (res.status === 403) throw named('Lambda.AWSLambdaException', body); // AccessDeniedException
  if (res.status !== 200) throw named('Lambda.ServiceException', body);
  if (res.headers.get('x-amz-function-error')) {
    let type = 'Lambda.Unknown';
    try { type = JSON.parse(body).errorType || type; } catch { /* not JSON */ }
    throw named(type, body);
  }
  return body === '' ? null : JSON.parse(body);
}

function named(name, message) {
  const e = new Error(message);
  e.name = name;
  return e;
}

async function codebuild(operation, body) {
  const res = await fetch(codebuildEndpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': `CodeBuild_20161006.${operation}`, ...authorization(accessKeyId, 'codebuild') },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) {
    // Step Functions names an integration's error Service.ExceptionName (CodeBuild's error code, as
    // "CodeBuild.AccountLimitExceededException" or "CodeBuild.AccessDeniedException"), and
    // CodeBuild.AWSCodeBuildException where the answer has no code of its own.
    let type = '';
    try { type = String(JSON.parse(text).__type || ''); } catch { /* not JSON */ }
    type = type.split('#').pop();
    throw named('CodeBuild.' + (type || 'AWSCodeBuildException'), text);
  }
  return JSON.parse(text);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// runOnCodeBuild is codebuild:startBuild.sync: start the build, wait for it to end. With a
// heartbeat (ms), a silence that long stops the build and fails with States.HeartbeatTimeout.
async function runOnCodeBuild(execution, params, heartbeatMs) {
  const task = { lastBeat: Date.now() }; // SendTaskHeartbeat finds it while the task runs
  execution.task = task;
  try {
    return await waitForCodeBuild(execution, params, heartbeatMs, task);
  } finally {
    if (execution.task === task) execution.task = undefined;
  }
}

async function waitForCodeBuild(execution, params, heartbeatMs, task) {
  const { build } = await codebuild('StartBuild', {
    projectName: params.ProjectName,
    imageOverride: params.ImageOverride,
    timeoutInMinutesOverride: params.TimeoutInMinutesOverride,
    environmentVariablesOverride: (params.EnvironmentVariablesOverride || []).map((v) => ({ name: v.Name, value: v.Value, type: v.Type })),
  });
  execution.codebuildId = build.id;
  for (;;) {
    if (execution.status !== 'RUNNING') throw named('States.Runtime', 'the execution ended');
    if (heartbeatMs > 0 && Date.now() - task.lastBeat > heartbeatMs) {
      try { await codebuild('StopBuild', { id: build.id }); } catch (e) { console.error(`stepfunctions: stop build ${build.id}: ${e.message}`); }
      throw named('States.HeartbeatTimeout', `no heartbeat for ${heartbeatMs / 1000} seconds`);
    }
    await sleep(Math.min(pollMs, heartbeatMs > 0 ? heartbeatMs : pollMs));
    const { builds } = await codebuild('BatchGetBuilds', { ids: [build.id] });
    const b = builds && builds[0];
    if (!b || b.buildStatus === 'IN_PROGRESS') continue;
    const shown = { Build: { Id: b.id, Arn: b.arn, BuildStatus: b.buildStatus, ProjectName: b.projectName, StartTime: b.startTime, EndTime: b.endTime } };
    if (b.buildStatus === 'SUCCEEDED') return shown;
    throw named('States.TaskFailed', JSON.stringify(shown));
  }
}

// waitForTaskToken is lambda:invoke.waitForTaskToken: invoke the function, then wait for the
// token's answer (SendTaskSuccess resolves, SendTaskFailure rejects task.answer). The answer may
// come while the function still runs: it is kept until the wait reads it.
async function waitForTaskToken(execution, params, heartbeatMs) {
  const task = { lastBeat: Date.now() };
  const answered = new Promise((resolve, reject) => { task.answer = { resolve, reject }; });
  answered.catch(() => {}); // read below; a wait that ended first leaves it unread
  execution.task = task;
  try {
    await invoke(String(params.FunctionName).split(':function:').pop(), params.Payload);
    for (;;) {
      if (execution.status !== 'RUNNING') throw named('States.Runtime', 'the execution ended');
      if (heartbeatMs > 0 && Date.now() - task.lastBeat > heartbeatMs) {
        throw named('States.HeartbeatTimeout', `no heartbeat for ${heartbeatMs / 1000} seconds`);
      }
      const tick = sleep(Math.min(pollMs, heartbeatMs > 0 ? heartbeatMs : pollMs)).then(() => undefined);
      const got = await Promise.race([answered.then((output) => ({ output })), tick]);
      if (got) return got.output;
    }
  } finally {
    if (execution.task === task) execution.task = undefined;
  }
}

// heartbeatOf is a state's heartbeat timeout in ms (0: none): its HeartbeatSeconds, or the
// tests' KILN_SFN_HEARTBEAT_MS for a state that has one.
function heartbeatOf(state) {
  if (!state.HeartbeatSeconds) return 0;
  return heartbeatOverrideMs > 0 ? heartbeatOverrideMs : state.HeartbeatSeconds * 1000;
}

// handlers overrides every task state by name: Lambda tasks invoke their function, the CodeBuild
// task runs on the CodeBuild stand-in.
function handlers(execution) {
  const out = {};
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type !== 'Task') continue;
    let run;
    if (state.Resource.startsWith('arn:aws:states:::codebuild:startBuild')) {
      run = (input) => runOnCodeBuild(execution, input, heartbeatOf(state));
    } else if (state.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken') {
      run = (input) => waitForTaskToken(execution, input, heartbeatOf(state));
    } else {
      const fn = state.Resource.split(':function:').pop();
      run = (input) => invoke(fn, input);
    }
    out[name] = recorded(execution, state.Resource, run);
  }
  return out;
}

// recorded wraps a task's handler so that the execution's history holds what Step Functions
// records of a task: its parameters (TaskScheduled) and its result or error.
function recorded(execution, resource, run) {
  const [resourceType, rest] = resource.startsWith('arn:aws:states:::') ? resource.slice(17).split(':') : ['lambda', 'invoke'];
  const task = { resourceType, resource: rest || resource };
  return async (input) => {
    record(execution, 'TaskScheduled', { taskScheduledEventDetails: { ...task, region, parameters: JSON.stringify(input) } });
    try {
      const output = await run(input);
      record(execution, 'TaskSucceeded', { taskSucceededEventDetails: { ...task, output: JSON.stringify(output ?? null) } });
      return output;
    } catch (e) {
      record(execution, 'TaskFailed', { taskFailedEventDetails: { ...task, error: e.name, cause: e.message } });
      throw e;
    }
  };
}

// record appends an event to the execution's history, as GetExecutionHistory answers it. An
// execution whose history reaches the quota (maxHistory, Step Functions' 25,000 events) fails,
// as in AWS: "If the execution history reaches this quota, the execution fails"
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
function record(execution, type, details) {
  const id = execution.history.length + 1;
  execution.history.push({ id, previousEventId: id - 1, timestamp: epoch(new Date()), type, ...details });
  if (execution.history.length >= maxHistory && execution.status === 'RUNNING' && !execution.overQuota) {
    execution.overQuota = true;
    execution.run.abort();
    end(execution, 'FAILED', {
      error: 'States.Runtime',
      cause: `The execution reached the maximum number of history events (${maxHistory}).`,
    }).catch((e) => console.error(`stepfunctions: end ${execution.name}: ${e.message}`));
  }
}

// recordStates keeps an execution's history (GetExecutionHistory) from its event log, the only
// reader of it, and reports its state transitions (entered states and retries) when it ends.
async function recordStates(execution) {
  const json = (v) => JSON.stringify(v ?? null);
  let transitions = 0;
  try {
    for await (const ev of execution.run.eventLogs) {
      if (ev.type === 'StateEntered' || ev.type === 'StateRetried') transitions++;
      recordEvent(execution, ev, json);
    }
  } finally {
    console.log(`transitions ${execution.arn} ${transitions}`);
  }
}

// recordEvent takes one of the state machine's own events (the execution's and its states' input
// and output) into the history, in AWS's shapes.
function recordEvent(execution, ev, json) {
  switch (ev.type) {
    case 'ExecutionStarted': record(execution, 'ExecutionStarted', { executionStartedEventDetails: { input: json(ev.input), roleArn: `arn:aws:iam::${account}:role/kiln-local` } }); break;
    case 'ExecutionSucceeded': record(execution, 'ExecutionSucceeded', { executionSucceededEventDetails: { output: json(ev.output) } }); break;
    case 'ExecutionFailed': record(execution, 'ExecutionFailed', { executionFailedEventDetails: { error: ev.Error, cause: ev.Cause } }); break;
    case 'ExecutionAborted': record(execution, 'ExecutionAborted', {}); break;
    case 'ExecutionTimeout': record(execution, 'ExecutionTimedOut', {}); break;
    case 'StateEntered': record(execution, `${ev.state.type}StateEntered`, { stateEnteredEventDetails: { name: ev.state.name, input: json(ev.state.input) } }); break;
    case 'StateExited': record(execution, `${ev.state.type}StateExited`, { stateExitedEventDetails: { name: ev.state.name, output: json(ev.state.output) } }); break;
    default: break;
  }
}

function start({ stateMachineArn: arn, name, input }) {
  if (arn !== stateMachineArn) throw new AWSError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
  if (!name || !/^[A-Za-z0-9_-]{1,80}$/.test(name)) throw new AWSError('InvalidName', `Invalid Name: '${name}'`);
  input = input ?? '{}';
  let parsed;
  try { parsed = JSON.parse(input); } catch { throw new AWSError('InvalidExecutionInput', 'Invalid State Machine Execution Input'); }
  const executionArn = `arn:aws:states:${region}:${account}:execution:${machineName}:${name}`;
  const had = executions.get(executionArn);
  if (had) {
    if (had.status === 'RUNNING' && had.input === input) return { executionArn, startDate: epoch(had.startDate) };
    throw new AWSError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
  }
  const taskToken = randomBytes(48).toString('base64url');
  const execution = { arn: executionArn, name, input, status: 'RUNNING', startDate: new Date(), taskToken, history: [] };
  executions.set(executionArn, execution);
  byToken.set(taskToken, execution);
  execution.run = machine.run(parsed, {
    overrides: { taskResourceLocalHandlers: handlers(execution) },
    context: {
      Execution: { Id: executionArn, Name: name, RoleArn: `arn:aws:iam::${account}:role/kiln-local` }, StateMachine: { Id: stateMachineArn, Name: machineName },
      Task: { Token: taskToken },
    },
  });
  recordStates(execution).catch((e) => console.error(`stepfunctions: history of ${name}: ${e.message}`));
  execution.run.result.then(
    (output) => end(execution, 'SUCCEEDED', { output }),
    (err) => {
      if (err instanceof ExecutionAbortedError) return; // StopExecution ended it
      if (err instanceof ExecutionTimeoutError) return end(execution, 'TIMED_OUT', { error: 'States.Timeout', cause: 'the execution timed out' });
      const caught = err.cause instanceof Error ? err.cause : err;
      return end(execution, 'FAILED', { error: caught.name, cause: caught.message });
    },
  );
  return { executionArn, startDate: epoch(execution.startDate) };
}

// end records an execution's end, stops the build it left running, and tells the ended function
// of a failed, timed out or aborted one.
async function end(execution, status, { output, error, cause } = {}) {
  if (execution.status !== 'RUNNING') return;
  Object.assign(execution, { status, stopDate: new Date(), output, error, cause });
  if (execution.codebuildId) {
    try { await codebuild('StopBuild', { id: execution.codebuildId }); } catch (e) { console.error(`stepfunctions: stop build ${execution.codebuildId}: ${e.message}`); }
  }
  if (status === 'SUCCEEDED') return;
  const event = {
    version: '0', id: randomUUID(), 'detail-type': 'Step Functions Execution Status Change', source: 'aws.states',
    account, time: execution.stopDate.toISOString().replace(/\.\d+Z$/, 'Z'), region, resources: [execution.arn],
    detail: {
      executionArn: execution.arn, stateMachineArn, name: execution.name, status,
      startDate: execution.startDate.getTime(), stopDate: execution.stopDate.getTime(),
      input: execution.input, output: null, inputDetails: { included: true }, outputDetails: null,
      error: error ?? null, cause: cause ?? null,
    },
  };
  try { await invoke(endedFunction, event, eventsAccessKeyId); } catch (e) { console.error(`stepfunctions: ended function: ${e.name}: ${e.message}`); }
}

async function stop({ executionArn, error, cause }) {
  const execution = executions.get(executionArn);
  if (!execution) throw new AWSError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
  if (execution.status === 'RUNNING') {
    execution.run.abort();
    await end(execution, 'ABORTED', { error, cause });
  }
  return { stopDate: epoch(execution.stopDate) };
}

function describe({ executionArn }) {
  const e = executions.get(executionArn);
  if (!e) throw new AWSError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
  const out = { executionArn, stateMachineArn, name: e.name, status: e.status, startDate: epoch(e.startDate), input: e.input };
  if (e.stopDate) out.stopDate = epoch(e.stopDate);
  if (e.output !== undefined) out.output = JSON.stringify(e.output);
  if (e.error) out.error = e.error;
  if (e.cause) out.cause = e.cause;
  return out;
}

// sendTaskHeartbeat resets the heartbeat clock of the task the token belongs to; a token never
// issued is InvalidToken, one whose task or execution ended TaskTimedOut, as in AWS. The token
// is never echoed.
function sendTaskHeartbeat({ taskToken }) {
  const execution = typeof taskToken === 'string' ? byToken.get(taskToken) : undefined;
  if (!execution) throw new AWSError('InvalidToken', 'Invalid Token: the task token is not one this state machine issued');
  if (execution.status !== 'RUNNING' || !execution.task) throw new AWSError('TaskTimedOut', 'Task Timed Out: the task does not exist anymore');
  execution.task.lastBeat = Date.now();
  return {};
}

// waitingTask is the task waiting for the token's answer (SendTaskSuccess, SendTaskFailure),
// which closes it: a second answer, or one for a task that waits for no answer, is TaskTimedOut.
function waitingTask(taskToken) {
  const execution = typeof taskToken === 'string' ? byToken.get(taskToken) : undefined;
  if (!execution) throw new AWSError('InvalidToken', 'Invalid Token: the task token is not one this state machine issued');
  const task = execution.task;
  if (execution.status !== 'RUNNING' || !task || !task.answer) throw new AWSError('TaskTimedOut', 'Task Timed Out: the task does not exist anymore');
  const { answer } = task;
  task.answer = undefined;
  return answer;
}

function sendTaskSuccess({ taskToken, output }) {
  let parsed;
  try { parsed = JSON.parse(output ?? ''); } catch { throw new AWSError('InvalidOutput', 'Invalid Output: the output is not JSON'); }
  waitingTask(taskToken).resolve(parsed);
  return {};
}

function sendTaskFailure({ taskToken, error, cause }) {
  waitingTask(taskToken).reject(named(error || 'States.TaskFailed', cause || ''));
  return {};
}

// history answers the execution's events, oldest first, in one page.
function history({ executionArn }) {
  const e = executions.get(executionArn);
  if (!e) throw new AWSError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
  return { events: e.history };
}

const operations = {
  StartExecution: start, StopExecution: stop, DescribeExecution: describe, GetExecutionHistory: history,
  SendTaskHeartbeat: sendTaskHeartbeat, SendTaskSuccess: sendTaskSuccess, SendTaskFailure: sendTaskFailure,
};

// A task's call that outlives its state (the state timed out, the execution was stopped) ends
// with nobody waiting for it: note it, never die of it.
process.on('unhandledRejection', (e) => console.error(`stepfunctions: a task call ended after its state: ${e && e.name}: ${e && e.message}`));

const server = http.createServer(async (req, res) => {
  const reply = (status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(body));
  };
  try {
    const target = req.headers['x-amz-target'] || '';
    const op = operations[target.replace(/^AWSStepFunctions\./, '')];
    if (req.method !== 'POST' || !target.startsWith('AWSStepFunctions.') || !op) {
      throw new AWSError('UnknownOperationException', `the stand-in does not answer ${target || req.method + ' ' + req.url}`);
    }
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body;
    try { body = JSON.parse(raw || '{}'); } catch { throw new AWSError('SerializationException', 'the request is not valid JSON'); }
    reply(200, await op(body));
  } catch (e) {
    if (e instanceof AWSError) reply(e.status, { __type: e.type, message: e.message });
    else { console.error(`stepfunctions: ${e.stack}`); reply(500, { __type: 'InternalFailure', message: String(e) }); }
  }
});

async function shutdown() {
  for (const e of executions.values()) {
    if (e.status === 'RUNNING') { e.run.abort(); await end(e, 'ABORTED', { error: 'kiln.Stopped', cause: 'kiln aws-local stopped' }); }
  }
  server.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.stdin.on('end', shutdown);
process.stdin.resume();

server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
