<?php

declare(strict_types=1);

namespace App\Controller;

use Goblin\Symfony\RateLimiter\RateLimiterFactory;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\Lock\LockFactory;

/**
 * A Symfony controller on Goblin: a quote API rate-limited per client (a sliding window of 3
 * requests in 10 seconds), and a report published under a lock, whose callers wait in line
 * inside the server, first come, first served.
 */
final class ReportController
{
    public function __construct(private readonly RateLimiterFactory $apiLimiter, private readonly LockFactory $locks, private readonly \Redis $redis)
    {
    }

    public function quote(Request $request): Response
    {
        $limit = $this->apiLimiter->create($request->getClientIp())->consume();
        $headers = [
            'X-RateLimit-Remaining' => $limit->getRemainingTokens(),
            'X-RateLimit-Limit' => $limit->getLimit(),
        ];
        if (!$limit->isAccepted()) {
            $headers['Retry-After'] = max(1, $limit->getRetryAfter()->getTimestamp() - time());

            return new JsonResponse(['error' => 'Too Many Requests'], Response::HTTP_TOO_MANY_REQUESTS, $headers);
        }

        return new JsonResponse(['quote' => 'Waiting in line beats polling.'], Response::HTTP_OK, $headers);
    }

    /** Publishes report `$id`, one publisher at a time; `work` milliseconds of work under the lock. */
    public function publish(Request $request, string $id): Response
    {
        $lock = $this->locks->createLock("report-$id", 30);
        $lock->acquire(true);   // waits in line in the server (GOBLIN.BWLOCK), no polling
        try {
            $acquired = $this->serverTime();
            usleep(1000 * (int) $request->query->get('work', '0'));
            $released = $this->serverTime();
        } finally {
            $lock->release();
        }

        return new JsonResponse(['report' => $id, 'acquired_ms' => $acquired, 'released_ms' => $released]);
    }

    /** The server's clock, in milliseconds: the times the lock was held, as the server saw them. */
    private function serverTime(): int
    {
        [$seconds, $micros] = $this->redis->time();

        return (int) $seconds * 1000 + intdiv((int) $micros, 1000);
    }
}
