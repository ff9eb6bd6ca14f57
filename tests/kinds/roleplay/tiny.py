"""A small practice scenario written for the engine tests: two branches, a fork, both terminal states."""

from __future__ import annotations

from typing import Any


def tiny() -> dict[str, Any]:
    return {
        "name": "tinyTeaShop",
        "botname": "Ada",
        "goal": "Calm the customer and agree on a fix.",
        "character": "You are Ada, a customer whose tea order is wrong. You are in a hurry.",
        "negprompt": 'You are short with vague answers. Say things like "So what are you going to do about it?" or '
        '"I have a train in ten minutes."',
        "opening": "*at the counter* This is not the tea I ordered.",
        "states": {
            "CalmBranch": {
                "Apology": {
                    "name": "Apology",
                    "condition": "{username} apologizes for the mistake",
                    "addprompt": 'Soften a little: "Fine. It happens, I suppose."',
                    "transitions": {
                        "Remake": {
                            "condition": "{username} offers a fresh remake OR a refund",
                            "type": "fork",
                        },
                        "Excuse": {"condition": "{username} blames the new colleague", "type": "fork"},
                    },
                },
                "Remake": {
                    "name": "Remake",
                    "addprompt": 'Accept: "A fresh one, quickly, please."',
                    "transitions": {},
                },
                "Excuse": {
                    "name": "Excuse",
                    "addprompt": 'Bristle: "That is not my problem."',
                    "transitions": {},
                },
            },
            "InfoBranch": {
                "Question": {
                    "name": "Question",
                    "condition": "{username} asks which tea was ordered",
                    "addprompt": 'Answer: "Jasmine green, no sugar."',
                    "transitions": {},
                }
            },
        },
        "tstates": {
            "SUCCESS": {
                "name": "SUCCESS",
                "condition": "{username} has reached Remake AND Question AND wishes a good trip",
                "addprompt": 'Leave content: "Thanks. Have a good day."',
            },
            "FAIL": {
                "name": "FAIL",
                "condition": "{username} insults the customer OR tells her to leave the shop",
                "addprompt": 'Storm off: "I will not be coming back."',
            },
        },
        "skill": "CustomerService",
        "level": "1",
    }
