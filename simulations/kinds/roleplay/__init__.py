"""Practice conversations (seed 001): the student talks to one character whose behaviour is a graph of states in
named branches; a judge reads each message against the open transitions (parallel or fork), the visited states
build the character's prompt, and SUCCESS or FAIL ends the conversation.

scenario.py (the seed's JSON schema, checked as a graph), graph.py (the seed's engine), conditions.py (the offline
judge's reading of conditions), document.py + machine.py (the state and its moves), offline.py (judge and
character without a model), bots.py (students for headless play), prompts.py, turns.py (the AI steps), platform.py
(the contract), pages.py + presenters.py + templates/roleplay/ (chat, graph, review), export.py, report.py."""
