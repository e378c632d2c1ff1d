"""A step's timings, kept for `GET /v1/steps/{id}/metrics` (the step row's `step_metrics`)."""

import time


class StepClock:
    """A step's timings as Letta's step metrics hold them (`GET /v1/steps/{id}/metrics`): when the step and its LLM
    request started (epoch ns), how long the request, the tools (only when some ran) and the whole step took."""

    def __init__(self) -> None:
        self.step_start_ns, self._step = time.time_ns(), time.perf_counter_ns()
        self.llm_request_start_ns, self._mark = self.step_start_ns, self._step
        self.llm_request_ns: int | None = None
        self.tool_execution_ns: int | None = None

    def llm_started(self) -> None:
        """Each attempt restarts the request's clock (a compaction between attempts is not the request's time)."""
        self.llm_request_start_ns, self._mark = time.time_ns(), time.perf_counter_ns()

    def llm_done(self) -> None:
        now = time.perf_counter_ns()
        self.llm_request_ns, self._mark = now - self._mark, now

    def tools_done(self, *, ran: bool) -> None:
        self.tool_execution_ns = time.perf_counter_ns() - self._mark if ran else None

    def metrics(self) -> dict[str, int | None]:
        return {
            "step_start_ns": self.step_start_ns,
            "llm_request_start_ns": self.llm_request_start_ns,
            "llm_request_ns": self.llm_request_ns,
            "tool_execution_ns": self.tool_execution_ns,
            "step_ns": time.perf_counter_ns() - self._step,
        }
