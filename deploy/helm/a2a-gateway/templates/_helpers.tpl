{{/* The chart's name. */}}
{{- define "a2a-gateway.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource names: the release name, with the chart's name unless it already holds it. */}}
{{- define "a2a-gateway.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "a2a-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "a2a-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "a2a-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "a2a-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Where the Secrets named in values are mounted in the gateway container. */}}
{{- define "a2a-gateway.hmacSecretDir" -}}/var/run/secrets/a2a-gateway/auth{{- end }}
{{- define "a2a-gateway.redisSecretDir" -}}/var/run/secrets/a2a-gateway/redis{{- end }}

{{/*
The Secrets the Redis index reads, as projected volume sources: each in a
directory of its own under redisSecretDir, as the config names them. Empty
when there are none.
*/}}
{{- define "a2a-gateway.redisSecretSources" -}}
{{- $redis := .Values.store.redis }}
{{- if eq .Values.store.type "redis" }}
{{- if $redis.password.secretName }}
- secret:
    name: {{ $redis.password.secretName }}
    items:
      - key: {{ $redis.password.key }}
        path: password/{{ $redis.password.key }}
{{- end }}
{{- if $redis.sentinel.password.secretName }}
- secret:
    name: {{ $redis.sentinel.password.secretName }}
    items:
      - key: {{ $redis.sentinel.password.key }}
        path: sentinel/{{ $redis.sentinel.password.key }}
{{- end }}
{{- if and $redis.tls.enabled $redis.tls.ca.secretName }}
- secret:
    name: {{ $redis.tls.ca.secretName }}
    items:
      - key: {{ $redis.tls.ca.key }}
        path: ca/{{ $redis.tls.ca.key }}
{{- end }}
{{- if and $redis.tls.enabled $redis.tls.clientCert.secretName }}
- secret:
    name: {{ $redis.tls.clientCert.secretName }}
    items:
      - key: {{ $redis.tls.clientCert.certKey }}
        path: client/{{ $redis.tls.clientCert.certKey }}
      - key: {{ $redis.tls.clientCert.keyKey }}
        path: client/{{ $redis.tls.clientCert.keyKey }}
{{- end }}
{{- end }}
{{- end }}

{{/* Refuse value combinations the gateway would reject only at start. */}}
{{- define "a2a-gateway.checkValues" -}}
{{- if not (has .Values.store.type (list "memory" "redis")) }}
{{- fail (printf "store.type %q is not one of memory, redis" .Values.store.type) }}
{{- end }}
{{- if and (eq .Values.store.type "memory") (gt (int .Values.replicaCount) 1) }}
{{- fail "replicaCount > 1 needs store.type redis: with memory each replica sees only its own tasks" }}
{{- end }}
{{- if eq .Values.store.type "redis" }}
{{- $redis := .Values.store.redis }}
{{- if not (has $redis.mode (list "single" "cluster" "sentinel")) }}
{{- fail (printf "store.redis.mode %q is not one of single, cluster, sentinel" $redis.mode) }}
{{- end }}
{{- if and (eq $redis.mode "single") (not $redis.address) (ne (len $redis.addresses) 1) }}
{{- fail "store.redis.address is required with store.type redis (mode single)" }}
{{- end }}
{{- if and (ne $redis.mode "single") (not $redis.addresses) }}
{{- fail (printf "store.redis.addresses is required in mode %s: the %s" $redis.mode (ternary "seed nodes" "sentinels" (eq $redis.mode "cluster"))) }}
{{- end }}
{{- if and (eq $redis.mode "sentinel") (not $redis.masterName) }}
{{- fail "store.redis.masterName is required in mode sentinel: the name the sentinels know the primary by" }}
{{- end }}
{{- if and (not $redis.tls.enabled) (or $redis.tls.ca.secretName $redis.tls.clientCert.secretName $redis.tls.serverName) }}
{{- fail "store.redis.tls: set enabled: true, or leave ca, clientCert and serverName empty" }}
{{- end }}
{{- end }}
{{- $grace := int .Values.terminationGracePeriodSeconds }}
{{- $drain := add (include "a2a-gateway.seconds" .Values.gateway.shutdownTimeout) (int .Values.preStopSleepSeconds) }}
{{- if le $grace (int $drain) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds plus gateway.shutdownTimeout (%d s): the kubelet would kill the gateway while calls and streams are still finishing" $grace (int $drain)) }}
{{- end }}
{{- end }}

{{/* A Go duration of whole seconds, minutes or hours (30s, 2m, 1h30m), in seconds; empty is the gateway's default, 30s. */}}
{{- define "a2a-gateway.seconds" -}}
{{- $d := default "30s" . | toString }}
{{- if not (regexMatch "^([0-9]+h)?([0-9]+m)?([0-9]+s)?$" $d) }}
{{- fail (printf "gateway.shutdownTimeout %q: want a duration of whole seconds, e.g. 30s, 2m or 1m30s" $d) }}
{{- end }}
{{- $h := regexFind "[0-9]+h" $d | trimSuffix "h" | default "0" | int }}
{{- $m := regexFind "[0-9]+m" $d | trimSuffix "m" | default "0" | int }}
{{- $s := regexFind "[0-9]+s" $d | trimSuffix "s" | default "0" | int }}
{{- add (mul $h 3600) (mul $m 60) $s }}
{{- end }}
