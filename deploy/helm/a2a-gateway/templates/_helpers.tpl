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

{{/* Refuse value combinations the gateway would reject only at start. */}}
{{- define "a2a-gateway.checkValues" -}}
{{- if not (has .Values.store.type (list "memory" "redis")) }}
{{- fail (printf "store.type %q is not one of memory, redis" .Values.store.type) }}
{{- end }}
{{- if and (eq .Values.store.type "memory") (gt (int .Values.replicaCount) 1) }}
{{- fail "replicaCount > 1 needs store.type redis: with memory each replica sees only its own tasks" }}
{{- end }}
{{- if and (eq .Values.store.type "redis") (not .Values.store.redis.address) }}
{{- fail "store.redis.address is required with store.type redis" }}
{{- end }}
{{- end }}
