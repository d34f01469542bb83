// Validates deploy/kubernetes (docs/deployment.md "Kubernetes") without a cluster:
//
// 1. Every manifest against its API schema: the Kubernetes OpenAPI schemas as kubernetes-models
//    compiles them (Kubernetes 1.34's API; MIT package, schemas from the Kubernetes project,
//    Apache-2.0), KEDA's ScaledObject against its CRD schema (@kubernetes-models/keda). Strict
//    like `kubeconform -strict`: a field the schema does not define is an error, found by
//    giving each field in turn a value no schema type accepts (a field the schema does not
//    constrain passes that too, so it is unknown).
// 2. What the manifests must say to each other and to deploy/container/run-options: the
//    Deployment's securityContext is the documented least privilege, the grace period covers the
//    longest handler timeout, the probes hit /healthz and /readyz, the Secret, ConfigMap,
//    Service, PodDisruptionBudget and ScaledObject point at what exists, KEDA scales on
//    relay_ready_backlog and never to zero (schedules).
//
// Each finding prints file:line: message; exit 1 when there is any. Run by ctest
// (deploy.kubernetes) with node_modules installed by `npm ci` here (scripts/test does it).
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LineCounter, parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const source = process.env.RELAY_SOURCE_DIR ?? join(here, "..", "..", "..");
// A directory to check other than deploy/kubernetes (mutations.mjs passes broken copies).
const manifests = process.argv[2] ?? join(source, "deploy", "kubernetes");
const findings = [];
let checks = 0;

function fail(file, line, message) {
  findings.push(`${file}:${line}: ${message}`);
}
function expect(condition, file, line, message) {
  checks += 1;
  if (!condition) fail(file, line, message);
}

// apiVersion/kind -> the model class that validates it.
async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "keda.sh") {
    return (await import(`@kubernetes-models/keda/keda.sh/${version}/${kind}`))[kind];
  }
  const path = group === "" ? `${version}/${kind}` : `${group}/${version}/${kind}`;
  return (await import(`kubernetes-models/${path}`))[kind];
}

function validationError(Model, object) {
  try {
    new Model(object).validate();
    return null;
  } catch (error) {
    return error;
  }
}

// Every path (array of keys) of an object's fields, depth first.
function fieldPaths(value, path = []) {
  if (value === null || typeof value !== "object") return [];
  const paths = [];
  for (const key of Object.keys(value)) {
    const child = [...path, Array.isArray(value) ? Number(key) : key];
    if (!Array.isArray(value)) paths.push(child);
    paths.push(...fieldPaths(value[key], child));
  }
  return paths;
}

function withValueAt(object, path, value) {
  const copy = structuredClone(object);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]] = value;
  return copy;
}

function lineOf(document, counter, path) {
  const node = document.getIn(path, true);
  const offset = node?.range?.[0] ?? document.contents?.range?.[0] ?? 0;
  return counter.linePos(offset).line;
}

const documents = [];
for (const name of readdirSync(manifests).filter((f) => f.endsWith(".yaml")).sort()) {
  const text = readFileSync(join(manifests, name), "utf8");
  const counter = new LineCounter();
  for (const document of parseAllDocuments(text, { lineCounter: counter })) {
    if (document.errors.length > 0) {
      for (const error of document.errors) fail(name, counter.linePos(error.pos[0]).line, error.message);
      continue;
    }
    documents.push({ file: name, document, counter, object: document.toJS() });
  }
}

for (const entry of documents) {
  const { file, document, counter, object } = entry;
  if (object.kind === "Kustomization") continue;  // kustomize's, checked below
  let Model;
  try {
    Model = await modelFor(object.apiVersion, object.kind);
  } catch {
    fail(file, 1, `no schema for apiVersion ${object.apiVersion}, kind ${object.kind}`);
    continue;
  }
  checks += 1;
  const error = validationError(Model, object);
  if (error) {
    for (const detail of error.errors ?? [{ instancePath: "", message: error.message }]) {
      const path = detail.instancePath.split("/").filter(Boolean).map((k) => (/^\d+$/.test(k) ? Number(k) : k));
      fail(file, lineOf(document, counter, path), `${object.kind} ${detail.instancePath || "/"}: ${detail.message}`);
    }
    continue;
  }
  for (const path of fieldPaths(object)) {
    checks += 1;
    if (!validationError(Model, withValueAt(object, path, Symbol("not a JSON value")))) {
      fail(file, lineOf(document, counter, path), `${object.kind}: unknown field ${path.join(".")}`);
    }
  }
}

// --- what the manifests say to each other and to the container options.
const find = (kind) => documents.find((d) => d.object.kind === kind);
const at = (entry, path) => (entry ? lineOf(entry.document, entry.counter, path) : 1);
const kustomization = find("Kustomization");
expect(kustomization, "kustomization.yaml", 1, "a kustomization lists the manifests");
if (kustomization) {
  const listed = new Set(kustomization.object.resources);
  for (const file of new Set(documents.map((d) => d.file))) {
    if (file !== "kustomization.yaml") expect(listed.has(file), "kustomization.yaml", 1, `${file} is not listed in resources`);
  }
  for (const file of listed) expect(documents.some((d) => d.file === file), "kustomization.yaml", 1, `${file} is listed but missing`);
}

const deployment = find("Deployment");
const pod = deployment?.object.spec.template.spec;
const container = pod?.containers.find((c) => c.name === "relay");
const file = deployment?.file ?? "deployment.yaml";
const cpath = ["spec", "template", "spec", "containers", 0];
expect(container, file, 1, "the Deployment runs a container named relay");
if (container) {
  const options = readFileSync(join(source, "deploy", "container", "run-options"), "utf8")
    .split("\n").filter((l) => l && !l.startsWith("#"));
  const sc = container.securityContext ?? {};
  const added = options.filter((o) => o.startsWith("--cap-add=")).map((o) => o.slice(10)).sort();
  expect(JSON.stringify(sc.capabilities?.add?.slice().sort()) === JSON.stringify(added), file, at(deployment, [...cpath, "securityContext", "capabilities"]),
    `capabilities.add must be the run-options' ${added.join(", ")}`);
  expect(options.includes("--cap-drop=ALL") && JSON.stringify(sc.capabilities?.drop) === '["ALL"]', file, at(deployment, [...cpath, "securityContext"]), "capabilities.drop must be [ALL]");
  expect(options.some((o) => o.startsWith("--security-opt=seccomp=")) && sc.seccompProfile?.type === "Localhost" &&
    sc.seccompProfile?.localhostProfile === "relay-seccomp.json", file, at(deployment, [...cpath, "securityContext", "seccompProfile"]),
    "seccompProfile must be Localhost relay-seccomp.json (deploy/container/seccomp.json on the node)");
  expect(options.includes("--security-opt=systempaths=unconfined") && sc.procMount === "Unmasked", file, at(deployment, [...cpath, "securityContext"]), "procMount must be Unmasked (systempaths=unconfined)");
  expect(pod.hostUsers === false, file, at(deployment, ["spec", "template", "spec"]), "procMount: Unmasked needs hostUsers: false");
  expect(options.includes("--security-opt=apparmor=unconfined") && sc.appArmorProfile?.type === "Unconfined", file, at(deployment, [...cpath, "securityContext"]), "appArmorProfile must be Unconfined");
  expect(options.includes("--read-only") && sc.readOnlyRootFilesystem === true, file, at(deployment, [...cpath, "securityContext"]), "readOnlyRootFilesystem must be true (--read-only)");
  expect(sc.allowPrivilegeEscalation !== false, file, at(deployment, [...cpath, "securityContext"]), "allowPrivilegeEscalation false sets no_new_privs, which breaks network: true (pasta)");
  expect(sc.privileged !== true, file, at(deployment, [...cpath, "securityContext"]), "never privileged");
  // 5 min, the longest handler timeout (docs/apps.md), plus the 2 s kill grace.
  expect(pod.terminationGracePeriodSeconds >= 302, file, at(deployment, ["spec", "template", "spec", "terminationGracePeriodSeconds"]), "terminationGracePeriodSeconds must cover a 5 min handler and its 2 s grace");
  expect(container.readinessProbe?.httpGet?.path === "/readyz", file, at(deployment, [...cpath, "readinessProbe"]), "readiness on /readyz");
  expect(container.livenessProbe?.httpGet?.path === "/healthz", file, at(deployment, [...cpath, "livenessProbe"]), "liveness on /healthz");
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));
  const secret = find("Secret");
  expect(env.REDIS_URI?.valueFrom?.secretKeyRef?.name === secret?.object.metadata.name &&
    secret?.object.stringData?.[env.REDIS_URI.valueFrom.secretKeyRef.key] !== undefined, file, at(deployment, [...cpath, "env"]), "REDIS_URI comes from the Secret");
  expect(env.RELAY_HTTP_ADDR?.value?.startsWith("0.0.0.0:"), file, at(deployment, [...cpath, "env"]), "the endpoints listen beyond loopback for the probes");
  const port = Number(env.RELAY_HTTP_ADDR?.value?.split(":")[1]);
  expect(container.ports?.some((p) => p.containerPort === port), file, at(deployment, [...cpath, "ports"]), "the container port is RELAY_HTTP_ADDR's");
  const apps = pod.volumes?.find((v) => v.name === "apps");
  const configmap = find("ConfigMap");
  for (const source of apps?.projected?.sources ?? []) {
    for (const item of source.configMap?.items ?? []) {
      expect(configmap?.object.data?.[item.key] !== undefined, file, at(deployment, ["spec", "template", "spec", "volumes"]), `ConfigMap key ${item.key} exists`);
    }
  }
  const labels = deployment.object.spec.template.metadata.labels;
  const selects = (selector) => Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
  const service = find("Service");
  expect(selects(service?.object.spec.selector), service?.file ?? "service.yaml", at(service, ["spec", "selector"]), "the Service selects the workers");
  const pdb = find("PodDisruptionBudget");
  expect(selects(pdb?.object.spec.selector?.matchLabels), pdb?.file ?? "pdb.yaml", at(pdb, ["spec", "selector"]), "the PodDisruptionBudget selects the workers");
  const scaled = find("ScaledObject");
  const sfile = scaled?.file ?? "scaledobject.yaml";
  expect(scaled?.object.spec.scaleTargetRef?.name === deployment.object.metadata.name, sfile, at(scaled, ["spec", "scaleTargetRef"]), "the ScaledObject scales the Deployment");
  expect((scaled?.object.spec.minReplicaCount ?? 0) >= 1, sfile, at(scaled, ["spec", "minReplicaCount"]), "never scaled to zero: the workers publish the schedules");
  expect(scaled?.object.spec.triggers?.some((t) => /relay_ready_backlog/.test(t.metadata?.query ?? "")), sfile, at(scaled, ["spec", "triggers"]), "KEDA scales on relay_ready_backlog");
}

if (findings.length > 0) {
  for (const finding of findings) console.error(finding);
  console.error(`${findings.length} finding(s) in deploy/kubernetes`);
  process.exit(1);
}
console.log(`deploy/kubernetes: ${documents.length} documents valid against the Kubernetes and KEDA schemas, ${checks} checks passed`);
