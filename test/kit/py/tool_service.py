"""An order desk's tools served in Python, against forkflow's documented contract only.

No forkflow code: a plain Temporal worker (the `temporalio` package from PyPI) with the two
activities the contract names. `forkflow.callTool` gets {v, tool, input, tool_use_id,
agent_id, root_id, turn, attempt} and returns {content, is_error?}; `forkflow.hook` gets
{v, event, agent_id, root_id, turn, tool?, input?, ...} and returns {decision?, message?,
input?, additional_context?}. Used by test/e2e/python-tool-service.test.ts.

Usage: python tool_service.py <address> <namespace> <task queue> <state dir>
"""
import asyncio
import os
import sys

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

ADDRESS, NAMESPACE, QUEUE, STATE = sys.argv[1:5]


def note(tool: str, call: dict) -> None:
    with open(os.path.join(STATE, "py-ledger.txt"), "a") as f:
        f.write(f"{tool} {call['tool_use_id']} {call['attempt']}\n")


def error(text: str) -> dict:
    return {"content": text, "is_error": True}


@activity.defn(name="forkflow.callTool")
async def call_tool(call: dict) -> dict:
    tool, args = call["tool"], call["input"]
    if tool == "lookup_order":
        order_id = args.get("order_id")
        if not isinstance(order_id, str) or not order_id:
            return error("Invalid input for lookup_order: order_id must be a non-empty string.")
        note(tool, call)
        return {"content": [{"type": "text", "text": f"order {order_id}: shipped from the python desk"}]}
    if tool == "slow_charge":
        label = str(args.get("label", ""))
        note(tool, call)
        with open(os.path.join(STATE, f"py-started-{label}-{call['attempt']}"), "w") as f:
            f.write(str(os.getpid()))
        # No heartbeats: forkflow does not rely on a service's.
        await asyncio.sleep(float(args.get("ms", 0)) / 1000)
        return {"content": f"charged {label}"}
    if tool == "explode":
        raise ApplicationError("the ledger is locked", type="LedgerLocked", non_retryable=True)
    return error(f"This service has no tool named {tool!r}.")


@activity.defn(name="forkflow.hook")
async def hook(call: dict) -> dict:
    if call["event"] == "PreToolUse" and call.get("tool") == "refund_order":
        return {"decision": "deny", "message": "refunds are closed today"}
    if call["event"] == "PostToolUse" and call.get("tool") == "lookup_order":
        return {"additional_context": "Checked by the python policy."}
    return {}


async def main() -> None:
    client = await Client.connect(ADDRESS, namespace=NAMESPACE)
    worker = Worker(client, task_queue=QUEUE, activities=[call_tool, hook])
    print("python tool worker polling", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main())
