#!/usr/bin/env python3
"""Checks the pods of Kubernetes manifests against the Pod Security Standards "restricted"
profile (the fields a restricted namespace's admission checks), plus this project's rules: no
service-account token mounted, images pinned to a tag other than `latest`.

usage: pod_security.py FILE...   (exit 1 and one line per problem when any)
"""
import sys

import yaml

ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod"}


def pod_spec(document):
    kind = document.get("kind")
    if kind == "Pod":
        return document.get("spec", {})
    if kind == "CronJob":
        return document["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if kind in WORKLOADS:
        return document["spec"]["template"]["spec"]
    return None


def check(name, spec):
    problems = []
    pod_context = spec.get("securityContext", {}) or {}
    if spec.get("automountServiceAccountToken") is not False:
        problems.append("automountServiceAccountToken is not false")
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            problems.append(f"{flag} is set")
    for volume in spec.get("volumes", []) or []:
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            problems.append(f"volume {volume.get('name')} is of a type the restricted profile refuses: {sorted(kinds)}")
    pod_seccomp = (pod_context.get("seccompProfile") or {}).get("type")
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    for container in containers:
        where = f"container {container.get('name')}"
        context = container.get("securityContext", {}) or {}
        if context.get("privileged"):
            problems.append(f"{where}: privileged")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation is not false")
        if not (context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is True):
            problems.append(f"{where}: runAsNonRoot is not true")
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            problems.append(f"{where}: runAsUser is 0")
        seccomp = (context.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{where}: seccompProfile is not RuntimeDefault or Localhost")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            problems.append(f"{where}: capabilities do not drop ALL")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            problems.append(f"{where}: adds capabilities beyond NET_BIND_SERVICE")
        image = container.get("image", "")
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        if "@sha256:" not in image and (not tag or tag == "latest"):
            problems.append(f"{where}: image {image!r} is not pinned to a tag or digest")
    return [f"{name}: {problem}" for problem in problems]


def main(paths):
    problems = []
    pods = 0
    for path in paths:
        with open(path) as handle:
            for document in yaml.safe_load_all(handle):
                if not document:
                    continue
                spec = pod_spec(document)
                if spec is None:
                    continue
                pods += 1
                problems += check(f"{path} {document['kind']}/{document['metadata']['name']}", spec)
    for problem in problems:
        print(problem)
    if pods == 0:
        print("no pod templates found")
        return 1
    print(f"{pods} pod template(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
