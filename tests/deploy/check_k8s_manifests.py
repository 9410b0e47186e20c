#!/usr/bin/env python3
"""Checks deploy/k8s/.

1. Every manifest against the Kubernetes OpenAPI schemas, strict (unknown fields are errors), with
   the schemas the PyPI package kubernetes-validate ships: for 1.29, the oldest release the fuzz Job
   supports (backoffLimitPerIndex, FailIndex), and for the newest one bundled. The kustomize
   rendering (`kubectl kustomize`) too, when kubectl is installed.
2. What no schema knows: the campaign's invariants across the four manifests (shard count =
   completions, one GPU per shard, both Jobs on the same volume and campaign, ...).
3. Each invariant of 2, and the schema check, is shown to fail on a manifest broken on purpose.

Usage: check_k8s_manifests.py [DEPLOY_K8S_DIR]   (exit 0 all good, 1 a check failed)
"""
import copy
import pathlib
import re
import shutil
import subprocess
import sys

try:
    import yaml
    import kubernetes_validate
except ImportError as e:  # the ctest wrapper installs them; say what is missing when run by hand
    sys.exit(f"check_k8s_manifests: {e.name} is missing: python3 -m pip install kubernetes-validate")

OLDEST = "1.29.0"  # backoffLimitPerIndex and podFailurePolicy FailIndex are beta (on) from 1.29
CAMPAIGN, PVC, FUZZ, MERGE = "kparity-fuzz-campaign", "kparity-fuzz-reports", "kparity-fuzz", "kparity-fuzz-merge"


def load(folder):
    docs = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs[(doc["kind"], doc["metadata"]["name"])] = doc
    return docs


def schema_errors(docs, versions):
    errors = []
    for (kind, name), doc in docs.items():
        for v in versions:
            try:
                kubernetes_validate.validate(doc, v, strict=True)
            except kubernetes_validate.ValidationError as e:
                errors.append(f"{kind}/{name} against {v}: {'.'.join(map(str, e.path))}: {e.message}")
    return errors


def pod(job):
    return job["spec"]["template"]["spec"]


def container(job):
    containers = pod(job)["containers"]
    if len(containers) != 1:
        raise AssertionError(f"{job['metadata']['name']}: one container expected, found {len(containers)}")
    return containers[0]


def script(job):
    c = container(job)
    return "\n".join(c.get("command", []) + c.get("args", []))


def uses_campaign(job):
    return any(e.get("configMapRef", {}).get("name") == CAMPAIGN for e in container(job).get("envFrom", []))


def claim_mount(job):
    """The mount path of the reports claim in the job's container, or None."""
    vols = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName") for v in pod(job).get("volumes", [])}
    for m in container(job).get("volumeMounts", []):
        if vols.get(m["name"]) == PVC:
            return m["mountPath"]
    return None


def invariant_errors(docs):
    """The campaign's own rules; returns a list of messages (empty when all hold)."""
    err = []
    need = [("ConfigMap", CAMPAIGN), ("PersistentVolumeClaim", PVC), ("Job", FUZZ), ("Job", MERGE)]
    missing = [f"{k}/{n}" for k, n in need if (k, n) not in docs]
    if missing:
        return [f"missing manifests: {', '.join(missing)}"]
    data = docs[("ConfigMap", CAMPAIGN)]["data"]
    fuzz, merge = docs[("Job", FUZZ)], docs[("Job", MERGE)]
    fs, ms = fuzz["spec"], merge["spec"]

    count = data.get("KPARITY_SHARD_COUNT", "")
    if not re.fullmatch(r"[1-9][0-9]*", count):
        err.append(f"KPARITY_SHARD_COUNT must be a positive integer, not {count!r}")
    elif int(count) != fs.get("completions"):
        err.append(f"KPARITY_SHARD_COUNT {count} differs from the fuzz Job's completions {fs.get('completions')}:"
                   " shards would be skipped or run twice")
    if not re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]+", data.get("KPARITY_FUZZ_SEED", "")):
        err.append("KPARITY_FUZZ_SEED must be a fixed decimal or 0x hex number: every shard needs the same seed")
    if not re.fullmatch(r"[1-9][0-9]*", data.get("KPARITY_FUZZ_CASES", "")):
        err.append("KPARITY_FUZZ_CASES must be a positive integer (a fixed budget, never --time)")
    for flag in ("--time", "--shard", "--report", "--corpus", "--seed", "--cases", "--jobs"):
        if flag in data.get("KPARITY_FUZZ_ARGS", "").split():
            err.append(f"KPARITY_FUZZ_ARGS must not set {flag}: the Job sets it for every shard")

    if fs.get("completionMode") != "Indexed":
        err.append("the fuzz Job must be completionMode: Indexed (JOB_COMPLETION_INDEX is the shard index)")
    if isinstance(fs.get("completions"), int) and fs.get("parallelism", 1) > fs["completions"]:
        err.append("the fuzz Job's parallelism exceeds its completions")
    if pod(fuzz).get("restartPolicy") != "Never":
        err.append("the fuzz Job needs restartPolicy: Never (podFailurePolicy requires it)")
    actions = {}
    for rule in fs.get("podFailurePolicy", {}).get("rules", []):
        for code in rule.get("onExitCodes", {}).get("values", []):
            if rule["onExitCodes"].get("operator") == "In":
                actions[code] = rule["action"]
    if actions.get(1) != "FailIndex":
        err.append("exit status 1 (a property failed, report written) must be FailIndex: a rerun fails alike")
    if actions.get(2) != "FailJob":
        err.append("exit status 2 (bad usage) must be FailJob: every shard would fail alike")
    if "FailIndex" in actions.values() and "backoffLimitPerIndex" not in fs:
        err.append("FailIndex needs backoffLimitPerIndex")

    fc, mc = container(fuzz), container(merge)
    gpus = str(fc.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", ""))
    if gpus != "1":
        err.append(f"each shard must request exactly one GPU (limits nvidia.com/gpu: 1), not {gpus!r}")
    if "nvidia.com/gpu" in mc.get("resources", {}).get("limits", {}):
        err.append("the merge Job must not hold a GPU")
    jobs_env = [e for e in fc.get("env", []) if e["name"] == "KPARITY_FUZZ_JOBS"]
    if not jobs_env or jobs_env[0].get("valueFrom", {}).get("resourceFieldRef", {}).get("resource") != "limits.cpu":
        err.append("KPARITY_FUZZ_JOBS must come from the container's limits.cpu (workers = CPUs granted)")
    fscript, mscript = script(fuzz), script(merge)
    for piece in ("fuzz --shard auto", '--jobs "$KPARITY_FUZZ_JOBS"', '--seed "$KPARITY_FUZZ_SEED"',
                  '--cases "$KPARITY_FUZZ_CASES"', "--report", "$JOB_COMPLETION_INDEX"):
        if piece not in fscript:
            err.append(f"the shard command lacks {piece!r}")
    if "--time" in fscript:
        err.append("the shard command must not use --time")
    for piece in ("fuzz merge", "-o ", "KPARITY_SHARD_COUNT"):
        if piece not in mscript:
            err.append(f"the merge command lacks {piece!r}")
    for job in (fuzz, merge):
        name = job["metadata"]["name"]
        if not uses_campaign(job):
            err.append(f"{name} must read the campaign ConfigMap {CAMPAIGN} (envFrom)")
        mount = claim_mount(job)
        if mount is None:
            err.append(f"{name} must mount the claim {PVC}")
        elif not data.get("KPARITY_CAMPAIGN_DIR", "").startswith(mount.rstrip("/") + "/"):
            err.append(f"{name}: KPARITY_CAMPAIGN_DIR {data.get('KPARITY_CAMPAIGN_DIR')!r} is not on the"
                       f" reports volume mounted at {mount}")
    if fc.get("image") != mc.get("image"):
        err.append("the fuzz and merge Jobs must run the same image (one kparity version reads what the other wrote)")
    return err


def shell_errors(docs):
    """`sh -n` on both Jobs' scripts: a syntax error would only show in a pod."""
    err = []
    for name in (FUZZ, MERGE):
        c = container(docs[("Job", name)])
        if c.get("command", [])[:2] != ["/bin/sh", "-c"]:
            err.append(f"{name}: command must be [/bin/sh, -c]")
            continue
        r = subprocess.run(["sh", "-n", "-c", c["args"][0]], capture_output=True, text=True)
        if r.returncode:
            err.append(f"{name}: shell syntax: {r.stderr.strip()}")
    return err


def kustomize_errors(folder, versions):
    listed = set(yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"])
    present = {p.name for p in folder.glob("*.yaml")} - {"kustomization.yaml"}
    err = [f"kustomization.yaml does not list {sorted(present - listed)}"] if present - listed else []
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print("check_k8s_manifests: kubectl not installed, the kustomize rendering is not checked")
        return err
    r = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True)
    if r.returncode:
        return err + [f"kubectl kustomize: {r.stderr.strip()}"]
    rendered = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(r.stdout) if d}
    return err + schema_errors(rendered, versions) + invariant_errors(rendered)


def job(docs, name):
    return docs[("Job", name)]


# Each mutation breaks one rule; the checks must report it, with the message that names that rule.
MUTATIONS = [
    ("misspelt field", "'completionMod' was unexpected",
     lambda d: job(d, FUZZ)["spec"].update(completionMod="Indexed")),
    ("wrong type", "'eight' is not of type 'integer'",
     lambda d: job(d, FUZZ)["spec"].update(completions="eight")),
    ("shard count differs from completions", "differs from the fuzz Job's completions",
     lambda d: job(d, FUZZ)["spec"].update(completions=3, parallelism=3)),
    ("not Indexed", "completionMode: Indexed",
     lambda d: job(d, FUZZ)["spec"].update(completionMode="NonIndexed")),
    ("two GPUs per shard", "exactly one GPU",
     lambda d: container(job(d, FUZZ))["resources"]["limits"].update({"nvidia.com/gpu": 2})),
    ("GPU in merge", "merge Job must not hold a GPU",
     lambda d: container(job(d, MERGE))["resources"]["limits"].update({"nvidia.com/gpu": 1})),
    ("time budget", "must not set --time",
     lambda d: d[("ConfigMap", CAMPAIGN)]["data"].update(KPARITY_FUZZ_ARGS="--op kda --time 60")),
    ("no fixed seed", "KPARITY_FUZZ_SEED must be a fixed",
     lambda d: d[("ConfigMap", CAMPAIGN)]["data"].update(KPARITY_FUZZ_SEED="$(date +%s)")),
    ("exit 1 retried", "exit status 1",
     lambda d: job(d, FUZZ)["spec"]["podFailurePolicy"]["rules"].pop(1)),
    ("workers from the node", "KPARITY_FUZZ_JOBS must come from",
     lambda d: container(job(d, FUZZ)).update(env=[{"name": "KPARITY_FUZZ_JOBS", "value": "64"}])),
    ("merge on another volume", "kparity-fuzz-merge must mount the claim",
     lambda d: pod(job(d, MERGE))["volumes"][0]["persistentVolumeClaim"].update(claimName="other")),
    ("campaign dir off the volume", "is not on the reports volume",
     lambda d: d[("ConfigMap", CAMPAIGN)]["data"].update(KPARITY_CAMPAIGN_DIR="/tmp/reports")),
    ("shard not auto", "lacks 'fuzz --shard auto'",
     lambda d: container(job(d, FUZZ))["args"].__setitem__(
         0, container(job(d, FUZZ))["args"][0].replace("--shard auto", "--shard 0/1"))),
    ("merge image differs", "same image",
     lambda d: container(job(d, MERGE)).update(image="kparity:other")),
    ("shell syntax", "shell syntax",
     lambda d: container(job(d, MERGE))["args"].__setitem__(0, "for f in; do fuzz merge -o KPARITY_SHARD_COUNT")),
]


def main():
    folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2] / "deploy/k8s")
    versions = [OLDEST, kubernetes_validate.latest_version()]
    docs = load(folder)
    errors = (schema_errors(docs, versions) + invariant_errors(docs) + shell_errors(docs)
              + kustomize_errors(folder, versions))
    for e in errors:
        print(f"FAIL {e}")
    missed = []
    for what, expected, mutate in MUTATIONS:
        broken = copy.deepcopy(docs)
        mutate(broken)
        found = schema_errors(broken, versions) + invariant_errors(broken) + shell_errors(broken)
        if not any(expected in e for e in found):
            missed.append(f"{what} (expected a message with {expected!r}; got {found or 'none'})")
    for what in missed:
        print(f"FAIL the checks did not notice a broken manifest: {what}")
    print(f"check_k8s_manifests: {len(docs)} manifests against Kubernetes {' and '.join(versions)},"
          f" {len(MUTATIONS) - len(missed)} of {len(MUTATIONS)} broken variants caught")
    return 1 if errors or missed else 0


if __name__ == "__main__":
    sys.exit(main())
