#!/usr/bin/env bash
# Removes subrange from the cluster kubectl points at, leaving Services and Nodes as they are
# (the API server's own allocator keeps serving Services; Nodes keep their pod CIDRs).
#
#   manifests/uninstall.sh
#
# Order matters:
# 1. the webhook configurations first, so no Service, Node or range object waits for webhook
#    pods that are about to go;
# 2. the range objects' finalizer (subrange.io/range-protection), which only subrange removes
#    and which would otherwise keep the objects, and with them the CRDs, Terminating forever;
# 3. everything manifests/ created, CRDs and both namespaces included: subrange-system and
#    subrange-state, with the state ConfigMaps and the reconciler's Lease.
set -euo pipefail
cd "$(dirname "$0")"

kubectl delete --ignore-not-found mutatingwebhookconfiguration subrange
kubectl delete --ignore-not-found validatingwebhookconfiguration subrange
# The reconciler would put the finalizer back on objects it still sees.
kubectl -n subrange-system scale deployment subrange-reconciler --replicas=0 2>/dev/null || true

for kind in servicecidrs.subrange.io clustercidrs.networking.x-k8s.io; do
  if kubectl get crd "$kind" >/dev/null 2>&1; then
    for name in $(kubectl get "$kind" -o name); do
      kubectl patch "$name" --type=merge -p '{"metadata":{"finalizers":null}}'
    done
  fi
done

# Both namespaces are in namespace.yaml, so this removes subrange-state (the state) as well.
kubectl delete --ignore-not-found --wait=true -k .
