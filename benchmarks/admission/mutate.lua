-- wrk script for benchmarks/admission-path: dry-run CREATEs of NodePort Services, each with a new
-- name and uid, so every call runs the whole mutating path (decode, plan, allocation preview,
-- patch) and keeps nothing.
counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local body = string.format('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{'
    .. '"uid":"u-%d","kind":{"group":"","version":"v1","kind":"Service"},"namespace":"load","name":"svc-%d",'
    .. '"operation":"CREATE","dryRun":true,"object":{"apiVersion":"v1","kind":"Service","metadata":{'
    .. '"name":"svc-%d","namespace":"load","labels":{"app":"load"}},"spec":{"type":"NodePort","ports":[{'
    .. '"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}}}}', counter, counter, counter)
  return wrk.format(nil, "/mutate?timeout=5s", nil, body)
end

-- Paced (benchmarks/admission-path's RATE): each connection waits this long between its calls.
local pace = tonumber(os.getenv("SUBRANGE_PACE_MS") or "0")
if pace > 0 then
  delay = function()
    return pace
  end
end
