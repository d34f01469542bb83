// The validator (validate.mjs) rejects broken manifests: each mutation below is made to a copy of
// deploy/kubernetes and must be reported with its file, line and message. Run by ctest
// (deploy.kubernetes_mutations).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const source = process.env.RELAY_SOURCE_DIR ?? join(here, "..", "..", "..");

const mutations = [
  ["a misspelt field", "deployment.yaml", "terminationGracePeriodSeconds: 330", "terminationGracePeriodSecond: 330", /deployment\.yaml:\d+: Deployment: unknown field spec\.template\.spec\.terminationGracePeriodSecond/],
  ["a wrong type", "deployment.yaml", "replicas: 2", "replicas: two", /deployment\.yaml:\d+: Deployment \/spec\/replicas: must be integer/],
  ["a /proc left masked", "deployment.yaml", "    procMount: Unmasked", "    procMount: Default", /procMount must be Unmasked/],
  ["a ScaledObject field KEDA does not have", "scaledobject.yaml", "minReplicaCount: 1", "minReplicaCont: 1", /scaledobject\.yaml:\d+: ScaledObject: unknown field spec\.minReplicaCont/],
  ["scaling to zero", "scaledobject.yaml", "minReplicaCount: 1", "minReplicaCount: 0", /never scaled to zero/],
  ["a capability beyond the documented ones", "deployment.yaml", "add: [SETUID, SETGID, SETFCAP, KILL]", "add: [SETUID, SETGID, SETFCAP, KILL, SYS_ADMIN]", /capabilities\.add must be/],
  ["no_new_privs", "deployment.yaml", "allowPrivilegeEscalation: true", "allowPrivilegeEscalation: false", /breaks network: true/],
  ["a grace period shorter than a handler", "deployment.yaml", "terminationGracePeriodSeconds: 330", "terminationGracePeriodSeconds: 30", /terminationGracePeriodSeconds must cover/],
  ["a PDB selecting nothing", "pdb.yaml", "app.kubernetes.io/component: worker", "app.kubernetes.io/component: console", /PodDisruptionBudget selects the workers/],
];

let failures = 0;
for (const [what, file, from, to, expected] of mutations) {
  const dir = mkdtempSync(join(tmpdir(), "relay-k8s-"));
  cpSync(join(source, "deploy", "kubernetes"), dir, { recursive: true });
  const text = readFileSync(join(dir, file), "utf8");
  if (!text.includes(from)) {
    console.error(`FAIL ${what}: "${from}" is not in ${file} any more`);
    failures += 1;
    continue;
  }
  writeFileSync(join(dir, file), text.replace(from, to));
  const run = spawnSync(process.execPath, [join(here, "validate.mjs"), dir], { encoding: "utf8", env: { ...process.env, RELAY_SOURCE_DIR: source } });
  rmSync(dir, { recursive: true, force: true });
  const ok = run.status === 1 && expected.test(run.stderr);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}: ${run.stderr.split("\n")[0]}`);
  if (!ok) failures += 1;
}
console.log(`${mutations.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
