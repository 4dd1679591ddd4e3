package awsapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codebuild"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// WorkflowConfig is where builds run in the AWS deployment: the build's state machine and the
// CodeBuild hosts it launches.
type WorkflowConfig struct {
	// StateMachineARN is the builds' state machine (KILN_STATE_MACHINE_ARN); empty: builds do
	// not run (a trigger fails its build).
	StateMachineARN string
	// HostProject is the CodeBuild project of the Linux build hosts (KILN_HOST_PROJECT).
	HostProject string
	// HostImages maps an engine version to its build host image (KILN_HOST_IMAGES, a JSON object
	// such as {"5.3":"<account>.dkr.ecr.<region>.amazonaws.com/kiln-engine:5.3"}).
	HostImages map[string]string
	// BuildTimeLimit is how long a build may run (KILN_BUILD_TIMEOUT, default 4h, as kiln serve).
	BuildTimeLimit time.Duration
	// HostCredentialPath is the Parameter Store path of the CodeBuild hosts' credentials
	// (KILN_HOST_CREDENTIAL_PATH, "/<stack>/hosts"): the claim puts each under it, the hosts'
	// CodeBuild role may read it. Empty: a CodeBuild claim fails.
	HostCredentialPath string
	// CodeBuildQuota is how many builds may hold a CodeBuild host at once (KILN_CODEBUILD_QUOTA,
	// default 20): the account's concurrent-builds quota, shared between organizations by turns
	// (sfn.Capacity).
	CodeBuildQuota int
}

// load reads the workflow's settings.
func (w *WorkflowConfig) load(getenv func(string) string) error {
	w.StateMachineARN, w.HostProject = settings.StateMachineARN.Get(getenv), settings.HostProject.Get(getenv)
	if w.StateMachineARN != "" {
		if _, err := sfn.ExecutionARN(w.StateMachineARN, "x"); err != nil {
			return fmt.Errorf("KILN_STATE_MACHINE_ARN: %w", err)
		}
	}
	w.HostImages = map[string]string{}
	if v := strings.TrimSpace(settings.HostImages.Get(getenv)); v != "" {
		if err := json.Unmarshal([]byte(v), &w.HostImages); err != nil {
			return errors.New(`KILN_HOST_IMAGES: must be a JSON object of engine version to image, such as {"5.3":"repo/kiln-engine:5.3"}`)
		}
		for version, image := range w.HostImages {
			if strings.TrimSpace(version) == "" || strings.TrimSpace(image) == "" {
				return fmt.Errorf("KILN_HOST_IMAGES: engine version %q has an empty name or image", version)
			}
		}
	}
	if w.HostCredentialPath = settings.HostCredentialPath.Get(getenv); w.HostCredentialPath != "" {
		if err := sfn.CheckCredentialPath(w.HostCredentialPath); err != nil {
			return fmt.Errorf("KILN_HOST_CREDENTIAL_PATH: %w", err)
		}
	}
	var err error
	if w.CodeBuildQuota, err = settings.CodeBuildQuota.Read(getenv); err != nil {
		return err
	}
	w.BuildTimeLimit, err = settings.BuildTimeout.Read(getenv)
	return err
}

// newWorkflow is the API's workflow: executions of the state machine, or, with none configured,
// the refusal of every start.
func newWorkflow(awsCfg aws.Config, cfg WorkflowConfig, logger *slog.Logger) builds.Workflow {
	if cfg.StateMachineARN == "" {
		return awsWorkflow{}
	}
	return &sfn.Workflow{Executions: awssfn.NewFromConfig(awsCfg), Hosts: codebuild.NewFromConfig(awsCfg),
		StateMachineARN: cfg.StateMachineARN, Logger: logger}
}
