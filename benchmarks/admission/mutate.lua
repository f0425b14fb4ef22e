-- wrk script for benchmarks/admission-path: dry-run CREATEs of NodePort Services, each with a new
-- name and uid, so every call runs the whole mutating path (decode, plan, allocation preview,
-- patch) and keeps nothing.
-- SUBRANGE_REVIEW=apiserver sends the review as kube-apiserver 1.20.2 does for a create: resource
-- and request kinds, userInfo, options, and the object as mutating admission sees it, with
-- managedFields and the defaults filled in but no uid or creationTimestamp yet (those come after
-- admission); about 1.4 KB. Otherwise (SUBRANGE_REVIEW=minimal, the default) about 0.4 KB.
counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local minimal = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{'
  .. '"uid":"u-%d","kind":{"group":"","version":"v1","kind":"Service"},"namespace":"load","name":"svc-%d",'
  .. '"operation":"CREATE","dryRun":true,"object":{"apiVersion":"v1","kind":"Service","metadata":{'
  .. '"name":"svc-%d","namespace":"load","labels":{"app":"load"}},"spec":{"type":"NodePort","ports":[{'
  .. '"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}}}}'

local apiserver = '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{'
  .. '"uid":"705ab4f5-6393-11e8-b7cc-%012d","kind":{"group":"","version":"v1","kind":"Service"},'
  .. '"resource":{"group":"","version":"v1","resource":"services"},'
  .. '"requestKind":{"group":"","version":"v1","kind":"Service"},'
  .. '"requestResource":{"group":"","version":"v1","resource":"services"},'
  .. '"name":"svc-%d","namespace":"load","operation":"CREATE",'
  .. '"userInfo":{"username":"kubernetes-admin","groups":["system:masters","system:authenticated"]},'
  .. '"object":{"kind":"Service","apiVersion":"v1","metadata":{"name":"svc-%d","namespace":"load",'
  .. '"creationTimestamp":null,"labels":{"app":"load"},"managedFields":[{"manager":"fabric8-kubernetes-client",'
  .. '"operation":"Update","apiVersion":"v1","time":"2026-11-27T13:37:25Z","fieldsType":"FieldsV1",'
  .. '"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:externalTrafficPolicy":{},'
  .. '"f:ports":{".":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{},"f:port":{},'
  .. '"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}}]},'
  .. '"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],"type":"NodePort",'
  .. '"sessionAffinity":"None","externalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}},'
  .. '"oldObject":null,"dryRun":true,'
  .. '"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","dryRun":["All"]}}}'

local shape = os.getenv("SUBRANGE_REVIEW") or "minimal"
local template = ({ minimal = minimal, apiserver = apiserver })[shape]
  or error("SUBRANGE_REVIEW is minimal or apiserver, not " .. shape)
request = function()
  counter = counter + 1
  -- Both templates take the counter three times: the review's uid, the request's and the object's name.
  return wrk.format(nil, "/mutate?timeout=5s", nil, string.format(template, counter, counter, counter))
end

-- Paced (benchmarks/admission-path's RATE): each connection waits this long between its calls.
local pace = tonumber(os.getenv("SUBRANGE_PACE_MS") or "0")
if pace > 0 then
  delay = function()
    return pace
  end
end
