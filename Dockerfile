# memlet: Letta-compatible agent server. Production image; pair it with a pgvector Postgres (docker-compose.yml).
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

# bubblewrap isolates custom tools (namespaces need a runtime that allows them; memlet says so at start if not).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 1000 memlet
COPY pyproject.toml README.md alembic.ini ./
COPY alembic ./alembic
COPY memlet ./memlet
# The code stays root-owned: the server (and any tool) can read it but never change it.
RUN pip install -e .

USER memlet
EXPOSE 8283
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8283/v1/health/').status == 200 else 1)"
CMD ["memlet", "server", "--host", "0.0.0.0", "--port", "8283"]
