"""Scripted students for the shipped practice conversations (scenarios/roleplay/*.json).

`SCRIPTS[name]` holds, for the scenario whose `name` is `name`, two lists of student lines, one line per turn:

- "success" visits, one transition per line, every state the scenario's SUCCESS condition names (taking the
  well-founded side of each fork), then says the closing thing SUCCESS asks for;
- "fail" takes the unwanted side of a fork (or goes straight for misconduct) and ends in FAIL.

The lines are written for the offline judge's key-word rules (simulations/kinds/roleplay/conditions.py): each line
carries at least half of the key words of the one condition it is meant to meet, and too few of every other open
condition's (FAIL's above all, which is checked first) to meet it, so the tie order never has to choose. A few
lines meet nothing on purpose (small talk). They are also meant to read, to a model judge, as plainly doing what
the intended condition says.
"""

from __future__ import annotations

SCRIPTS: dict[str, dict[str, list[str]]] = {
    "marketEntryCaseInterview": {
        "success": [
            # DefineFramework
            "I'd split this into three buckets: how big and how fast-growing the electric luxury market is, who "
            "we'd be up against, and if the economics work for the client. That's my framework.",
            # DefineFramework -> RefineFramework
            "I'd also add a fourth bucket on entry mode: importing fully built cars versus local assembly, since "
            "that drives both cost and tariffs.",
            # RequestData
            "Let's start with the market. Could you share the luxury car sales figures for the region, and how "
            "much of that is electric?",
            # RequestData -> SizeMarket
            "So by 2030 the electric luxury segment is 25% of 400,000, roughly 100,000 cars a year, up from "
            "40,000 today.",
            # SizeMarket -> AssessEconomics
            "Eight percent of 100,000 is 8,000 cars. At $90,000 with a 15% margin that's $13,500 per car, so an "
            "annual profit of about $108 million and a payback period of just over three years on the $350 "
            "million.",
            # ExploreCompetition
            "That looks attractive on paper. Who are the main competitors in luxury EVs there?",
            # ExploreCompetition -> IdentifyRisks
            "The biggest threat is a price war started by BYD. A second threat is the weak charging network "
            "outside the big cities, which could slow adoption.",
            # PresentRecommendation
            "My final recommendation is to enter, starting with Thailand and Singapore.",
            # PresentRecommendation -> DataDrivenConclusion (fork; WeakConclusion is blocked)
            "That recommendation is backed by the numbers I calculated: 8,000 cars and $108 million a year pay "
            "back the $350 million in just over three years. To mitigate the risks, I'd price just above BYD and "
            "partner with a charging operator in each capital.",
            # SUCCESS
            "Thank you. Could I get your feedback on how I handled the case?",
        ],
        "fail": [
            # PresentRecommendation
            "Honestly, my final recommendation is to enter right away. The region is booming.",
            # PresentRecommendation -> WeakConclusion (fork; DataDrivenConclusion is blocked)
            "It's a gut feeling, really: a brand with this much prestige will sell anywhere.",
            # FAIL (WeakConclusion reached and the candidate insists; also "numbers ... pointless")
            "I insist on it. Crunching numbers is pointless for a brand like this.",
        ],
    },
    "cafeBarista": {
        "success": [
            # AcknowledgeFeelings
            "I'm so sorry. Twelve minutes is far too long, especially when you're in a rush.",
            # AcknowledgeFeelings -> TakeOwnership
            "The milk mix-up was our error, and I take full responsibility for it.",
            # CheckDairy
            "Just so I get it right this time: do you have a dairy allergy or intolerance?",
            # CheckDairy -> UseCleanJug
            "Then I'll use a clean jug and purge the steam wand first, so there's no trace of it.",
            # OfferRemake
            "I'll remake your drink with oat milk right now.",
            # OfferRemake -> PrioritizeOrder (fork; SendToBackOfQueue is blocked)
            "I'll put it ahead of the queue, so it'll be ready within two minutes.",
            # TakeOwnership -> OfferGoodwill
            "And I'll refund today's order. This one's on the house.",
            # SUCCESS
            "Here's your oat latte, made fresh. Safe journey, and good luck with the meeting!",
        ],
        "fail": [
            # OfferRemake
            "Fine, I can remake the drink with oat milk.",
            # OfferRemake -> SendToBackOfQueue (fork; PrioritizeOrder is blocked)
            "But you'll have to wait in line again like everyone else. There are six orders ahead of you.",
            # FAIL ("overreacting"; also SendToBackOfQueue reached and insisting on the queue)
            "Honestly, you're overreacting. Everyone waits their turn in the queue.",
        ],
    },
    "salaryNegotiation": {
        "success": [
            # ExpressEnthusiasm
            "Thank you, Marcus! I'm really excited about this role and the team.",
            # ExpressEnthusiasm -> HighlightValue
            "In my last job I built the forecasting model that cut late deliveries by 12%, and I'd bring that "
            "experience and value to your routing work from day one.",
            # AskAboutBand
            "Before we get into numbers, could you tell me the approved band for this level?",
            # AskAboutBand -> CiteMarketData
            "From the salary surveys I've checked, analysts with my skills in this city earn $85,000 to $92,000. "
            "That's the market data I'm going by.",
            # MakeCounter
            "With that in mind, I'd like to ask for a higher base salary of $88,000.",
            # MakeCounter -> ExploreTotalPackage (fork; IssueUltimatum is blocked)
            "I appreciate you moving on that. If the base is capped, could we look at a signing bonus or a "
            "learning budget to close the gap?",
            # ExploreTotalPackage -> ConfirmTerms
            "So to confirm the package we've agreed: $84,000 base, $5,000 up front and $2,000 for training. Could "
            "you send those terms in writing?",
            # SUCCESS
            "That works for me. I'm happy to accept the revised offer. Thanks, Marcus!",
        ],
        "fail": [
            # MakeCounter
            "That's lower than I expected. I need a higher base salary: $90,000.",
            # MakeCounter -> IssueUltimatum (fork; ExploreTotalPackage is blocked)
            "If you can't get to $90,000, I'll walk away and take another offer.",
            # FAIL (IssueUltimatum reached and the threat repeated)
            "I meant it: $90,000 or I walk away today.",
        ],
    },
    "coalitionBuilding": {
        "success": [
            # ExploreConcerns
            "Thank you for the time. Before I pitch anything, what matters most for the livelihoods of your "
            "mining communities?",
            # PitchProposal
            "Here is our proposal: a ban on mercury amalgamation in gold mining, with a 2030 deadline.",
            # (small talk: meets no condition)
            "I take the point on coal. Our group also backs tighter mercury limits for coal-fired power plants.",
            # ExploreConcerns -> OfferFinancing
            "To make it workable, the proposal sets aside dedicated funding for mercury-free processing "
            "equipment such as gravity concentrators, paid out first.",
            # PitchProposal -> FlexibleTimeline (fork; RigidDeadline is blocked)
            "And the deadline would be flexible: each country's clock starts only once that funding has actually "
            "arrived, through its national action plan.",
            # SUCCESS
            "So will Tanzania join our coalition and co-sponsor the text on Thursday?",
        ],
        "fail": [
            # PitchProposal
            "Our proposal is simple: a ban on mercury amalgamation with a 2030 deadline for every country.",
            # PitchProposal -> RigidDeadline (fork; FlexibleTimeline is blocked)
            "I insist: that deadline is non-negotiable, with no exceptions for anyone.",
            # FAIL ("sanctions")
            "And if Tanzania blocks it, we'll push for trade sanctions.",
        ],
    },
}
