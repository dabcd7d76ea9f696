"""Glue between kenning and other libraries, one module each; each imports its library only when imported,
so ``import kenning`` loads none of them. Every adapter acts for one end user through
:class:`~kenning.integrations._user.UserMemoryBinding` (one dataset, refused for another user's memory).

- :mod:`kenning.integrations.anthropic`: core memory files as the Anthropic SDK's memory tool
  (``pip install 'kenning[anthropic]'``).
- :mod:`kenning.integrations.langgraph`: a LangGraph ``BaseStore`` in each user's memory (LangMem's tools
  run on it), ``create_agent`` middleware and ``StateGraph`` nodes for recall and turns
  (``pip install 'kenning[langgraph]'``).
- :mod:`kenning.integrations.openai_agents`: the OpenAI Agents SDK's ``Session`` on kenning's messages,
  recall/remember/forget tools and core memory in the instructions (``pip install 'kenning[openai-agents]'``).
- :mod:`kenning.integrations.llamaindex`: a memory block for LlamaIndex's ``Memory`` and
  recall/remember/forget tools (``pip install 'kenning[llamaindex]'``).
- :mod:`kenning.integrations.pydantic_ai`: Pydantic AI deps, tools, instructions and run hand-over, one
  capability (``pip install 'kenning[pydantic-ai]'``).
"""
